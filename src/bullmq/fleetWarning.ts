/**
 * What `remoteTools` found wrong with its fleet at start-up, discriminated on `code`: nothing is thrown
 * (the calls themselves fail fast with the same `code` as a `RemoteToolError`), it is told to
 * `onWarning`.
 * - `'no_worker'`: no worker of `queue` sent a heartbeat (none started yet, another prefix or Redis, a
 *   queue name misspelt on one side);
 * - `'redis_unreachable'`: the Redis at `address` could not be reached within `connectTimeoutMs`.
 *
 * @example
 * ```ts
 * const fleet = remoteTools([renderPage], {
 *   connection, queue: 'browsers', secret,
 *   onWarning: (warning) => log.warn(warning.code === 'no_worker' ? `no worker on ${warning.queue}` : `Redis down at ${warning.address}`),
 * });
 * ```
 */
export type FleetWarning =
  | { readonly code: 'no_worker'; readonly queue: string; readonly message: string }
  | { readonly code: 'redis_unreachable'; readonly address: string; readonly message: string };

/**
 * The default `onWarning` of `remoteTools`: a process warning, which Node prints (type
 * `ToolstreamFleetWarning`, code `TOOLSTREAM_NO_WORKER` or `TOOLSTREAM_REDIS_UNREACHABLE`) and a
 * listener can collect.
 *
 * @example
 * ```ts
 * process.on('warning', (w) => w.name === 'ToolstreamFleetWarning' && log(w.message));
 * warnFleet({ code: 'no_worker', queue: 'browsers', message: 'no worker serves queue "browsers"' });
 * ```
 */
export function warnFleet(warning: FleetWarning): void {
  process.emitWarning(warning.message, { type: 'ToolstreamFleetWarning', code: warning.code === 'no_worker' ? 'TOOLSTREAM_NO_WORKER' : 'TOOLSTREAM_REDIS_UNREACHABLE' });
}
