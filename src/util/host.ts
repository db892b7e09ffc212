/**
 * What the core asks of the runtime beyond web-standard APIs, looked up rather than imported, so the
 * core loads where there is no `process` (a page, a Worker) and does on Node exactly what it did before.
 * This file is the core's only use of `process`; `test/portability/coreBundle.test.ts` holds it to that.
 */

/** What kind of warning: Node's warning `type` (its `name`) and `code`. */
export interface HostWarningKind {
  readonly type: string;
  readonly code: string;
}

/** The part of Node's `process` the core uses, where the runtime has one (Node, Bun, Deno, workerd's `nodejs_compat`). */
interface NodeProcess {
  readonly emitWarning?: unknown;
  readonly getBuiltinModule?: unknown;
}

/** Node's `path` and `fs` functions a workspace needs (`runCodeTool({ workspace })`). */
export interface HostPaths {
  readonly resolve: (path: string) => string;
  readonly realpath: (path: string) => string;
  readonly sep: string;
}

const nodeProcess = (): NodeProcess | undefined => (globalThis as { readonly process?: NodeProcess }).process;

/**
 * Tells whoever runs the program of something that went wrong beside the stream (an observer that
 * threw): a process warning where the runtime has them — Node prints it, and `process.on('warning')`
 * collects it — else `console.warn`, the channel a page and a Worker have.
 *
 * @example
 * ```ts
 * hostWarning('an observer failed on …', { type: 'ToolstreamObserverWarning', code: 'TOOLSTREAM_OBSERVER_ERROR' });
 * ```
 */
export function hostWarning(message: string, kind: HostWarningKind): void {
  const host = nodeProcess();
  if (typeof host?.emitWarning === 'function') {
    (host.emitWarning as (message: string, options: HostWarningKind) => void).call(host, message, { type: kind.type, code: kind.code });
  } else {
    console.warn(`(${kind.type} ${kind.code}) ${message}`);
  }
}

/**
 * Node's path resolution and `realpathSync`, through `process.getBuiltinModule` (Node 20.16+, Bun,
 * Deno), or `undefined` in a runtime without a file system of its own.
 *
 * @example
 * ```ts
 * const roots = hostPaths() === undefined ? [dir] : [hostPaths()!.resolve(dir)];
 * ```
 */
export function hostPaths(): HostPaths | undefined {
  const load = nodeProcess()?.getBuiltinModule;
  if (typeof load !== 'function') return undefined;
  const path = load('node:path') as { resolve(path: string): string; sep: string } | undefined;
  const fs = load('node:fs') as { realpathSync(path: string): string } | undefined;
  if (path === undefined || fs === undefined) return undefined;
  return { resolve: (p) => path.resolve(p), realpath: (p) => fs.realpathSync(p), sep: path.sep };
}
