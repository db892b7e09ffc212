import { PROGRAM_FILE, type CompiledProgram } from './transpile.js';

const MAX_FRAMES = 8;

/**
 * A thrown value as the prelude describes it inside QuickJS, every string capped: an error's fields,
 * or any other value's rendering.
 */
export type DescribedThrow =
  | {
      readonly name: string;
      readonly message: string;
      readonly stack?: string;
      readonly code?: string;
      readonly lineNumber?: number;
      readonly fileName?: string;
    }
  | { readonly value: string };

/**
 * What a program threw, as text a model can act on: `Name: message` (with a tool error's code), then
 * its stack with positions in the model's own source. Frames of the wrapper and the prelude are left out.
 *
 * @example
 * formatProgramError({ name: 'TypeError', message: 'x is undefined', stack: '    at <anonymous> (program.ts:3:6)\n' }, compiled)
 * // 'TypeError: x is undefined\n    at line 3, column 6'
 */
export function formatProgramError(thrown: DescribedThrow, compiled: CompiledProgram | undefined): string {
  if (!('message' in thrown)) return `Uncaught ${thrown.value}`;
  const code = thrown.code === undefined ? '' : ` [${thrown.code}]`;
  const head = `${thrown.name}${code}: ${thrown.message}`;
  const frames = thrown.stack === undefined ? [] : mapFrames(thrown.stack, compiled);
  // A syntax error QuickJS found carries its position outside the stack.
  if (frames.length === 0 && thrown.lineNumber !== undefined && thrown.fileName === PROGRAM_FILE) {
    const position = compiled?.original(thrown.lineNumber, 1);
    if (position !== undefined) frames.push(`    at line ${position.line}`);
  }
  return [head, ...frames].join('\n');
}

const FRAME = /^\s*at (?:(.*?) \()?program\.ts:(\d+):(\d+)\)?\s*$/;

function mapFrames(stack: string, compiled: CompiledProgram | undefined): string[] {
  const frames: string[] = [];
  for (const line of stack.split('\n')) {
    const match = FRAME.exec(line);
    if (match === null || compiled === undefined) continue;
    const position = compiled.original(Number(match[2]), Number(match[3]));
    if (position === undefined) continue;
    const where = `line ${position.line}, column ${position.column}`;
    const name = match[1];
    frames.push(name === undefined || name === '<anonymous>' || name === '<eval>' ? `    at ${where}` : `    at ${name} (${where})`);
    if (frames.length === MAX_FRAMES) {
      frames.push('    ...');
      break;
    }
  }
  return frames;
}
