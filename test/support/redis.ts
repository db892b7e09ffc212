import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READY_MS } from './timing.js';

/**
 * A real Redis for the fleet tests: the one `.ci/run` started (`REDIS_URL`), else one of our own when
 * `redis-server` is on PATH, else none — and then the tests say they were skipped and how to install it,
 * except under `CI=true`, where a missing Redis is a failure (`requireRedis`).
 */
export interface TestRedis {
  readonly url: string;
  /** Stops the Redis this process started (a no-op for one it was given). */
  stop(): Promise<void>;
}

/** Why there is no Redis, when there is none: a sentence for the skip message. */
export const REDIS_MISSING = 'no Redis: set REDIS_URL, or install one (`apt-get install -y redis-server`) so the tests can start it';

/** The Redis `.ci/run` gave (`REDIS_URL`); an empty value is none, as for `REDIS_CLUSTER_NODES` (it meant localhost:6379). */
const givenRedis = (): string | undefined => process.env['REDIS_URL'] || undefined;

/** Whether the fleet tests can run here: a Redis was given, or one can be started. */
export function redisAvailable(): boolean {
  if (givenRedis() !== undefined) return true;
  installed ??= spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
  return installed;
}
let installed: boolean | undefined;

/** Why the fleet tests cannot run here ({@link REDIS_MISSING}), or undefined when they can: for `skippedBecause`. */
export const redisMissing = (): string | undefined => (redisAvailable() ? undefined : REDIS_MISSING);

/** Under CI a missing Redis fails instead of skipping: the fleet is part of what CI must check. */
export function requireRedis(): void {
  if (process.env['CI'] === 'true' && !redisAvailable()) throw new Error(`CI=true but ${REDIS_MISSING}`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A Redis this process started (`own: true`): it can also be restarted, on the same port. */
export interface OwnRedis extends TestRedis {
  /**
   * Stops the server (SIGKILL: a crash, not a clean shutdown), waits `downMs`, and starts it again on
   * the same port and directory; resolves once it answers PING. Without `persist` it comes back
   * empty, as the tests' and CI's Redis would (no persistence); with it, it comes back with every
   * write it answered before (`appendonly yes`, `appendfsync always`).
   */
  restart(downMs: number): Promise<void>;
}

/**
 * The given Redis, or a fresh one of our own on a free loopback port, once it answers PING. `own: true`
 * always starts one (a test that restarts or kills its Redis must not touch the shared one); `persist`
 * makes that one write every command to an append-only file first, so it survives a restart. Tests that
 * share a Redis keep apart by their queue names and key prefixes.
 */
export async function startRedis(options: { readonly own: true; readonly persist?: boolean }): Promise<OwnRedis>;
export async function startRedis(options?: { readonly own?: boolean }): Promise<TestRedis>;
export async function startRedis(options: { readonly own?: boolean; readonly persist?: boolean } = {}): Promise<TestRedis | OwnRedis> {
  const given = givenRedis();
  if (given !== undefined && options.own !== true) return { url: given, stop: async () => undefined };
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'toolstream-redis-'));
  const persistence = options.persist === true ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const args = ['--bind', '127.0.0.1', '--port', String(port), '--save', '', ...persistence, '--dir', dir];
  const url = `redis://127.0.0.1:${port}`;
  let server = await serve(args, port, url);
  const exited = (child: ChildProcess) =>
    new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
  return {
    url,
    stop: async () => {
      const stopped = exited(server);
      server.kill('SIGTERM');
      await stopped;
      rmSync(dir, { recursive: true, force: true });
    },
    restart: async (downMs: number) => {
      const stopped = exited(server);
      server.kill('SIGKILL');
      await stopped;
      await new Promise((resolve) => setTimeout(resolve, downMs));
      server = await serve(args, port, url);
    },
  };
}

/**
 * Starts redis-server with `args`; resolves once it answers PING on `port` — within {@link READY_MS},
 * else it is killed and the start fails. PING goes over a socket of our own (no `redis-cli` process,
 * which `spawnSync` would wait for with the event loop stopped: on a busy machine, a test's timers too).
 */
async function serve(args: readonly string[], port: number, url: string): Promise<ChildProcess> {
  const server: ChildProcess = spawn('redis-server', args, { stdio: 'ignore' });
  const deadline = performance.now() + READY_MS;
  while (performance.now() < deadline && server.exitCode === null) {
    if (await pings(port)) return server;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  server.kill('SIGKILL');
  throw new Error(`redis-server did not answer PING on ${url} within ${READY_MS / 1000} s${server.exitCode === null ? '' : ` (it exited with code ${server.exitCode})`}`);
}

/** Whether a Redis on 127.0.0.1:`port` answers PING (false while nothing listens yet, or it is loading). */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    const done = (pong: boolean) => (socket.destroy(), resolve(pong));
    socket.setTimeout(5000, () => done(false));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
    socket.on('error', () => done(false));
  });
}
