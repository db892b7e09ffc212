import type { CodeRuntime } from '../../src/index.js';

/** The `tools` a scripted program sees: each call resolves to a JSON copy of the value, or rejects with `{ name, message, code }`. */
export type ScriptTools = Readonly<Record<string, (args?: unknown) => Promise<unknown>>>;
export type Script = (tools: ScriptTools) => Promise<unknown>;

const json = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

/**
 * A `CodeRuntime` for tests whose programs are functions, named by the program text: what QuickJS does
 * at the boundary (JSON copies both ways, errors as `{ name, message, code }`, an aborted run resolves
 * as `'abort'` at once) without a worker, so properties can run thousands of programs. `runs` counts
 * the runs of each program.
 */
export function scriptedRuntime(scripts: Readonly<Record<string, Script>>): CodeRuntime & { readonly runs: Map<string, number> } {
  const runs = new Map<string, number>();
  return {
    language: 'scripted functions (tests)',
    isolation: 'none',
    settleMs: 0, // its programs go on in microtasks: a timer's turn is enough
    runs,
    run: ({ program, bindings, signal }) =>
      new Promise((resolve) => {
        const script = scripts[program];
        if (script === undefined) return resolve({ logs: [], failure: { kind: 'exception', message: `no script ${program}` } });
        runs.set(program, (runs.get(program) ?? 0) + 1);
        const stop = signal ?? new AbortController().signal;
        const tools: Record<string, (args?: unknown) => Promise<unknown>> = {};
        for (const [name, fn] of Object.entries(bindings[0]?.functions ?? {})) {
          tools[name] = async (args) => {
            try {
              return json(await fn(json(args), stop));
            } catch (error) {
              const { name: kind, message, code } = error as { name: string; message: string; code?: string };
              throw Object.assign(new Error(message), { name: kind, code });
            }
          };
        }
        if (stop.aborted) return resolve({ logs: [], failure: { kind: 'abort', message: 'aborted' } });
        stop.addEventListener('abort', () => resolve({ logs: [], failure: { kind: 'abort', message: 'aborted' } }), { once: true });
        script(tools).then(
          (value) => resolve({ value: json(value), logs: [] }),
          (error: unknown) => resolve({ logs: [], failure: { kind: 'exception', message: error instanceof Error ? error.message : String(error) } }),
        );
      }),
    close: async () => {},
  };
}
