import { PROGRAM_FILE, type CompiledProgram } from './transpile.js';

const MAX_FRAMES = 8;

/**
 * What a program threw, as text a model can act on: `Name: message` (with a tool error's code), then
 * its stack with positions in the model's own source. Frames of the wrapper and the prelude are left out.
 *
 * @example
 * formatProgramError({ name: 'TypeError', message: 'x is undefined', stack: '    at <anonymous> (program.ts:3:6)\n' }, compiled)
 * // 'TypeError: x is undefined\n    at line 3, column 6'
 */
export function formatProgramError(thrown: unknown, compiled: CompiledProgram | undefined): string {
  if (!isErrorLike(thrown)) return `Uncaught ${describeThrown(thrown)}`;
  const code = typeof thrown.code === 'string' ? ` [${thrown.code}]` : '';
  const head = `${String(thrown.name ?? 'Error')}${code}: ${String(thrown.message ?? '')}`;
  const frames = typeof thrown.stack === 'string' ? mapFrames(thrown.stack, compiled) : [];
  // A syntax error QuickJS found carries its position outside the stack.
  if (frames.length === 0 && typeof thrown.lineNumber === 'number' && thrown.fileName === PROGRAM_FILE) {
    const position = compiled?.original(thrown.lineNumber, 1);
    if (position !== undefined) frames.push(`    at line ${position.line}`);
  }
  return [head, ...frames].join('\n');
}

interface ErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly stack?: unknown;
  readonly code?: unknown;
  readonly lineNumber?: unknown;
  readonly fileName?: unknown;
}

function isErrorLike(value: unknown): value is ErrorLike {
  return typeof value === 'object' && value !== null && 'message' in value && ('name' in value || 'stack' in value);
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

function describeThrown(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
