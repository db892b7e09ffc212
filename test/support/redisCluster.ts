import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, type ClusterOptions } from 'ioredis';
import { READY_MS } from './timing.js';

/**
 * A real Redis Cluster (3 masters, no replicas, on loopback) for the fleet and journal tests: the one
 * `.ci/run` started (`REDIS_CLUSTER_NODES=127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`), else one of our own
 * when `redis-server` and `redis-cli` are on PATH, else none — and then the tests say they were skipped,
 * except under `CI=true`, where a missing cluster is a failure (`requireRedisCluster`).
 *
 * Processes started here carry the test file's mark in their environment (inherited from `setup.ts`),
 * so `leftovers.ts` kills whatever a failed test could not stop.
 */
export interface RedisClusterHandle {
  /** The masters' addresses: what a `Cluster` is given as its startup nodes. */
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  /** A new ioredis `Cluster` on {@link nodes} (the caller closes it); `options` as ioredis takes them. */
  cluster(options?: ClusterOptions): Cluster;
  /**
   * Kills node `index` (SIGKILL: a crash), waits `downMs` (default 0), and starts it again on the same
   * port with the same cluster config, so it takes its slots back — empty, as nothing persists; resolves
   * once every node says `cluster_state:ok`. Only on a private cluster: it throws on the shared one.
   */
  restartNode(index: number, downMs?: number): Promise<void>;
  /** Stops every process this handle started (a no-op for the shared cluster). */
  stop(): Promise<void>;
}

/** Why there is no cluster, when there is none: a sentence for the skip message. */
export const REDIS_CLUSTER_MISSING =
  'no Redis Cluster: set REDIS_CLUSTER_NODES, or install redis-server and redis-cli (`apt-get install -y redis-server`) so the tests can start one';

/** Whether the cluster tests can run here: a cluster was given, or one can be started. */
export function redisClusterAvailable(): boolean {
  if (process.env['REDIS_CLUSTER_NODES'] !== undefined) return true;
  installed ??= ['redis-server', 'redis-cli'].every((tool) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0);
  return installed;
}
let installed: boolean | undefined;

/** Why the cluster tests cannot run here ({@link REDIS_CLUSTER_MISSING}), or undefined when they can: for `skippedBecause`. */
export const redisClusterMissing = (): string | undefined => (redisClusterAvailable() ? undefined : REDIS_CLUSTER_MISSING);

/** Under CI a missing cluster fails instead of skipping: running on a cluster is part of what CI must check. */
export function requireRedisCluster(): void {
  if (process.env['CI'] === 'true' && !redisClusterAvailable()) throw new Error(`CI=true but ${REDIS_CLUSTER_MISSING}`);
}

/**
 * A key prefix of its own for one test, with a hash tag (so a fleet's or journal's keys share a slot)
 * and a random part (so tests sharing the CI cluster never see each other's keys).
 *
 * @example
 * ```ts
 * const prefix = clusterPrefix('cancel'); // '{cancel-1f3a…}'
 * ```
 */
export function clusterPrefix(name = 'ts'): string {
  return `{${name}-${randomUUID().slice(0, 8)}}`;
}

/**
 * The given cluster (`REDIS_CLUSTER_NODES`), or — with `private: true`, or when none is given — three
 * masters of our own on free loopback ports, joined by `redis-cli --cluster create`, once every node
 * says `cluster_state:ok`. Tests that restart or kill nodes must use `private: true`.
 */
export async function startRedisCluster(options: { readonly private?: boolean } = {}): Promise<RedisClusterHandle> {
  const given = process.env['REDIS_CLUSTER_NODES'];
  if (given !== undefined && options.private !== true) {
    const nodes = given.split(',').map(parseAddress);
    await waitForClusterOk(nodes.map((node) => node.port));
    return {
      nodes,
      cluster: (clusterOptions) => newCluster(nodes, clusterOptions),
      restartNode: () => Promise.reject(new Error('restartNode needs a private cluster (startRedisCluster({ private: true })), not the shared REDIS_CLUSTER_NODES')),
      stop: async () => undefined,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'toolstream-cluster-'));
  const ports = await freePorts(3);
  const argsOf = (port: number) => [
    '--port', String(port), '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
    '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir,
  ];
  const servers: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => stopProcess(server, 'SIGTERM')));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) servers.push(await serve(argsOf(port), port));
    await create(ports);
    await waitForClusterOk(ports);
  } catch (error) {
    await stop();
    throw error;
  }
  const nodes = ports.map((port) => ({ host: '127.0.0.1', port }));
  return {
    nodes,
    cluster: (clusterOptions) => newCluster(nodes, clusterOptions),
    restartNode: async (index, downMs = 0) => {
      const server = servers[index];
      const port = ports[index];
      if (server === undefined || port === undefined) throw new Error(`no node ${index}: the cluster has ${ports.length}`);
      await stopProcess(server, 'SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, downMs));
      servers[index] = await serve(argsOf(port), port);
      await waitForClusterOk(ports);
    },
    stop,
  };
}

function newCluster(nodes: readonly { host: string; port: number }[], options?: ClusterOptions): Cluster {
  return new Cluster(nodes.map((node) => ({ ...node })), options);
}

function parseAddress(address: string): { host: string; port: number } {
  const at = address.trim().lastIndexOf(':');
  const port = Number(address.trim().slice(at + 1));
  if (at <= 0 || !Number.isInteger(port)) throw new Error(`REDIS_CLUSTER_NODES: "${address}" is not host:port`);
  return { host: address.trim().slice(0, at), port };
}

async function freePorts(count: number): Promise<number[]> {
  // Held open together, so the three are distinct; closed just before the servers bind them.
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<ReturnType<typeof createServer>>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
    })),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('no port');
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  // A cluster node also listens on port + 10000 (the cluster bus): keep clear of ports that cannot have one.
  return ports.every((port) => port + 10000 < 65536) ? ports : freePorts(count);
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

async function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const done = exited(child);
  child.kill(signal);
  await done;
}

/** Starts redis-server with `args`; resolves once it answers PING on `port` within {@link READY_MS}, else kills it and fails. */
async function serve(args: readonly string[], port: number): Promise<ChildProcess> {
  const server = spawn('redis-server', args, { stdio: 'ignore' });
  const deadline = performance.now() + READY_MS;
  while (performance.now() < deadline && server.exitCode === null) {
    if ((await ask(port, 'PING')).startsWith('+PONG')) return server;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  server.kill('SIGKILL');
  throw new Error(`redis-server did not answer PING on 127.0.0.1:${port} within ${READY_MS / 1000} s${server.exitCode === null ? '' : ` (it exited with code ${server.exitCode})`}`);
}

/** `redis-cli --cluster create` on the three masters (async: `spawnSync` would stop this process's timers). */
async function create(ports: readonly number[]): Promise<void> {
  const cli = spawn('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  cli.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  cli.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => cli.once('exit', (status) => resolve(status)));
  if (code !== 0) throw new Error(`redis-cli --cluster create failed (exit ${code}): ${output.slice(-2000)}`);
}

/** Resolves once every node on `ports` says `cluster_state:ok` (within {@link READY_MS}, else fails saying which did not). */
async function waitForClusterOk(ports: readonly number[]): Promise<void> {
  const deadline = performance.now() + READY_MS;
  for (;;) {
    const answers = await Promise.all(ports.map((port) => ask(port, 'CLUSTER INFO')));
    const notOk = ports.filter((_, i) => !answers[i]?.includes('cluster_state:ok'));
    if (notOk.length === 0) return;
    if (performance.now() > deadline) throw new Error(`the Redis Cluster did not reach cluster_state:ok within ${READY_MS / 1000} s (not ok: ${notOk.join(', ')})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Sends one inline command to 127.0.0.1:`port` over a socket of our own and resolves with the raw
 * reply (a status line, or a whole bulk string), or '' when nothing answers.
 */
function ask(port: number, command: string): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(`${command}\r\n`));
    const done = (reply: string) => (socket.destroy(), resolve(reply));
    socket.setTimeout(5000, () => done(''));
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      const lineEnd = answer.indexOf('\r\n');
      if (lineEnd < 0) return;
      if (!answer.startsWith('$')) return done(answer);
      const length = Number(answer.slice(1, lineEnd));
      if (length < 0 || Buffer.byteLength(answer) >= lineEnd + 2 + length + 2) done(answer);
    });
    socket.on('error', () => done(''));
  });
}
