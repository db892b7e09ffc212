import { traceSegment, TraceMap } from '@jridgewell/trace-mapping';
import { transform } from 'sucrase';

/** The file name QuickJS reports for the program; positions in it are mapped back to the model's source. */
export const PROGRAM_FILE = 'program.ts';

// The program is the body of an async function. The opening goes on its first line, so the program's
// lines keep their numbers and only line 1's columns shift.
const OPENING = '(async () => {';
const CLOSING = '\n})()';

/** A program ready for QuickJS, with the way back from its positions to the model's. */
export interface CompiledProgram {
  readonly code: string;
  /** The position in the model's source (1-based line and column) of a position QuickJS reported. */
  readonly original: (line: number, column: number) => { readonly line: number; readonly column: number } | undefined;
}

/**
 * Strips TypeScript's types (a superset, so JavaScript passes through) with sucrase, which keeps line
 * numbers, and wraps the body in an async function.
 *
 * @returns the compiled program, or the syntax error's message with its position in the model's source.
 */
export function compileProgram(source: string): CompiledProgram | { readonly syntaxError: string } {
  let output: ReturnType<typeof transform>;
  try {
    output = transform(source, {
      transforms: ['typescript'],
      disableESTransforms: true,
      filePath: PROGRAM_FILE,
      sourceMapOptions: { compiledFilename: 'program.js' },
    });
  } catch (error) {
    return { syntaxError: describeSyntaxError(error) };
  }
  const map = new TraceMap(output.sourceMap as ConstructorParameters<typeof TraceMap>[0]);
  const sourceLines = source.split('\n');
  const generatedLines = output.code.split('\n');
  const lines = sourceLines.length;
  const original = (line: number, column: number) => {
    if (line < 1 || line > lines) return undefined; // the closing of the wrapper
    const generated = line === 1 ? column - 1 - OPENING.length : column - 1;
    const segment = generated < 0 ? undefined : traceSegment(map, line - 1, generated);
    if (segment === null || segment === undefined || segment.length < 4) return { line, column: Math.max(1, generated + 1) };
    const [segmentColumn, , sourceLine = line - 1, sourceColumn = segmentColumn] = segment;
    let at = sourceColumn + (generated - segmentColumn);
    // sucrase maps the token after a removed non-null assertion (`a!.b`) onto the `!`: step past it.
    const text = sourceLines[sourceLine] ?? '';
    while (text[at] === '!' && generatedLines[line - 1]?.[generated] !== '!') at++;
    return { line: sourceLine + 1, column: at + 1 };
  };
  return { code: OPENING + output.code + CLOSING, original };
}

function describeSyntaxError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // sucrase: "Error transforming program.ts: Unexpected token (3:7)", both 1-based
  const text = message.replace(/^Error transforming [^:]*: /, '');
  const position = /\s*\((\d+):(\d+)\)$/.exec(text);
  if (position === null) return `SyntaxError: ${text}`;
  return `SyntaxError: ${text.slice(0, position.index)}\n    at line ${position[1]}, column ${position[2]}`;
}
