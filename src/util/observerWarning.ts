import { describeError, quote } from './describe.js';
import { hostWarning } from './host.js';
import type { ToolResult } from '../types/toolResult.js';

/**
 * The default `onObserverError`: a process warning, which Node prints and a listener can collect
 * (`console.warn` where the runtime has no `process`: {@link hostWarning}).
 * A leaf, so the options (which default to it) and the result stage (which calls it) both import it
 * from below instead of one of them from the other.
 *
 * @example
 * ```ts
 * process.on('warning', (w) => w.name === 'ToolstreamObserverWarning' && log(w.message));
 * warnObserverError(new Error('metrics down'), result);
 * ```
 */
export function warnObserverError(error: unknown, result: ToolResult): void {
  hostWarning(`an observer failed on the result of call ${quote(result.id)} (${result.name}): ${describeError(error)}`, {
    type: 'ToolstreamObserverWarning',
    code: 'TOOLSTREAM_OBSERVER_ERROR',
  });
}
