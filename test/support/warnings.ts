import { vi } from 'vitest';

/**
 * The process warnings emitted while `work` runs, taken instead of printed: a test that provokes one on
 * purpose (an observer that throws: `ToolstreamObserverWarning`) checks it, and a green run prints none.
 * (A `'warning'` listener sees them too, but Node prints them all the same.) Each is the `Error` Node
 * would have emitted: its `name` the warning's type, its `code` the code.
 *
 * @example
 * ```ts
 * const { value, warnings } = await capturingWarnings(() => pipeline.run(calls));
 * expect(warnings.map((w) => w.name)).toEqual(['ToolstreamObserverWarning']);
 * ```
 */
export async function capturingWarnings<T>(work: () => Promise<T>): Promise<{ readonly value: T; readonly warnings: readonly (Error & { readonly code?: string })[] }> {
  const warnings: (Error & { code?: string })[] = [];
  const spy = vi.spyOn(process, 'emitWarning').mockImplementation(((warning: string | Error, options?: string | { type?: string; code?: string }, code?: string) => {
    const type = typeof options === 'string' ? options : options?.type;
    const made = typeof warning === 'string' ? Object.assign(new Error(warning), { name: type ?? 'Warning' }) : warning;
    const madeCode = typeof options === 'object' ? options.code : code;
    warnings.push(madeCode === undefined ? made : Object.assign(made, { code: madeCode }));
  }) as typeof process.emitWarning);
  try {
    return { value: await work(), warnings };
  } finally {
    spy.mockRestore();
  }
}
