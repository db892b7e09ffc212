import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileProgram, type CompiledProgram } from '../../../src/ptc/quickjs/transpile.js';
import { positionOf } from './helpers.js';

function compiled(source: string): CompiledProgram {
  const result = compileProgram(source);
  if ('syntaxError' in result) throw new Error(result.syntaxError);
  return result;
}

/** Every marker, found where QuickJS would report it in the compiled code, maps back to itself in the source. */
function expectMarkersMapped(source: string, markers: readonly string[]): void {
  const program = compiled(source);
  for (const marker of markers) {
    const generated = positionOf(program.code, marker);
    expect(program.original(generated.line, generated.column), marker).toEqual(positionOf(source, marker));
  }
}

describe('compileProgram', () => {
  it('wraps the body in an async function, keeping its line numbers', () => {
    const source = 'const a: number = 1;\n\nreturn a;';
    const { code } = compiled(source);
    expect(code.startsWith('(async () => {')).toBe(true);
    expect(code.trimEnd().endsWith('})()')).toBe(true);
    expect(code.split('\n')).toHaveLength(source.split('\n').length + 1);
    expect(code).not.toContain('number');
  });

  it('passes JavaScript through, mapping positions one to one', () => {
    const source = 'const a = 1;\nfunction f(x) {\n  return marker1(x) + a;\n}\nreturn marker2(f(2));';
    expect(compiled(source).code).toContain(source);
    expectMarkersMapped(source, ['marker1', 'marker2']);
  });

  it('maps positions on a line whose types were removed before them', () => {
    const source = [
      'const a: number = 1, b: Array<{ x: string }> = [] as any; marker1(a);',
      'const f = <T extends object>(x: T, y?: number): T => marker2(x)!; const g: (n: number) => string = String; marker3(g);',
    ].join('\n');
    expectMarkersMapped(source, ['marker1', 'marker2', 'marker3']);
  });

  it('maps positions just after a non-null assertion onto the token, not the removed `!`', () => {
    const source = 'const a: any = { b: {} };\nreturn a!.x + a.b!.c!.d;';
    const program = compiled(source);
    const generatedLine = program.code.split('\n')[1]!;
    // QuickJS reports a member access at its `.`: each maps to the `.` after the `!` in the source.
    const dots = [...generatedLine.matchAll(/\./g)].map((match) => match.index + 1);
    const expected = [...'return a!.x + a.b!.c!.d;'.matchAll(/\./g)].map((match) => ({ line: 2, column: match.index + 1 }));
    expect(dots.map((column) => program.original(2, column))).toEqual(expected);
  });

  it('maps positions after interfaces and types spanning lines, and enums', () => {
    const source = [
      'interface Foo {',
      '  a: number;',
      '  b: {',
      '    c: string;',
      '  };',
      '}',
      'type Union =',
      '  | { kind: "a" }',
      '  | { kind: "b" };',
      'enum Color { Red, Green = 5, Blue }',
      'const enumValue: number = Color.Blue as number; marker1(enumValue);',
      'declare const ambient: string;',
      'class K { private readonly z: number = 1; constructor(public q: string) { marker2(this); } }',
      'const u = { kind: "a" } satisfies Union; marker3(u);',
      'marker4!.x;',
    ].join('\n');
    expectMarkersMapped(source, ['marker1', 'marker2', 'marker3', 'marker4']);
  });

  it('maps nothing past the program (the wrapper’s closing)', () => {
    const program = compiled('return 1');
    expect(program.original(2, 1)).toBeUndefined();
    expect(program.original(0, 1)).toBeUndefined();
    expect(program.original(1, 1)).toEqual({ line: 1, column: 1 }); // inside the opening: clamped to the start
  });

  it('maps positions for any placement of type annotations (property)', () => {
    const type = fc.constantFrom('number', 'string[]', '{ a: number; b?: string }', 'Array<Record<string, number>>', '(x: number) => void', 'unknown');
    const line = fc.record({ annotate: fc.option(type, { nil: undefined }), cast: fc.option(type, { nil: undefined }), indent: fc.nat(4) });
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 8 }), (lines) => {
        const source = lines
          .map(({ annotate, cast, indent }, i) => {
            const declared = annotate === undefined ? '' : `: ${annotate}`;
            const casted = cast === undefined ? '' : ` as ${cast}`;
            return `${' '.repeat(indent)}const v${i}${declared} = (${i}${casted}); mark${i}(v${i}${casted});`;
          })
          .join('\n');
        expectMarkersMapped(source, lines.map((_, i) => `mark${i}(`));
      }),
      { numRuns: 100 },
    );
  });

  it.each([
    ['const x: = 1', 'SyntaxError: Unexpected token\n    at line 1, column 10'],
    ['const a = 1;\nlet b = )', 'SyntaxError: Unexpected token\n    at line 2, column 9'],
    ['\n\nconst s = "abc', 'SyntaxError: Unterminated string constant\n    at line 3, column 11'],
    ['interface A {\n  a: number\n  b: \n}', 'SyntaxError: Unexpected token\n    at line 4, column 1'],
    ['enum E { A = }', 'SyntaxError: Unexpected token\n    at line 1, column 14'],
  ])('reports the syntax error of %j with its position', (source, message) => {
    expect(compileProgram(source)).toEqual({ syntaxError: message });
  });
});
