import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { READY_MS } from './timing.js';

/**
 * A real PostgreSQL for the tests of `toolstream/postgres`: the one `.ci/run` started
 * (`TOOLSTREAM_POSTGRES_URL`), else a cluster of our own (initdb + pg_ctl in a temp dir, on a free
 * loopback port) when PostgreSQL's binaries are installed, else none — and then the tests say they were
 * skipped and how to install it, except under `CI=true`, where a missing PostgreSQL is a failure
 * ({@link requirePostgres}).
 *
 * Tests that share a server keep apart by schema: each uses its own ({@link testSchema}), so they never
 * see each other's tables. A server of our own is started with the test file's mark in its environment
 * (runuser and pg_ctl pass it on), so `leftovers.ts` kills a postmaster a failed set-up could not stop.
 */
export interface TestPostgres {
  /** `postgres://app@127.0.0.1:PORT/postgres`: trust authentication, no password. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops the server this process started and removes its directory (a no-op for one it was given). */
  stop(): Promise<void>;
  /**
   * Only on a server this process started: stops it as a crash would (`pg_ctl stop -m immediate`),
   * waits `downMs`, and starts it again on the same port and data directory (it recovers every commit
   * it answered); resolves once it accepts connections.
   */
  restart?(downMs: number): Promise<void>;
}

/** A server this process started (`own: true`): it can also be restarted. */
export interface OwnPostgres extends TestPostgres {
  restart(downMs: number): Promise<void>;
}

/** Why there is no PostgreSQL, when there is none: a sentence for the skip message. */
export const POSTGRES_MISSING =
  'no PostgreSQL: set TOOLSTREAM_POSTGRES_URL, or install one (`apt-get install -y postgresql`) so the tests can start it';

const GIVEN = 'TOOLSTREAM_POSTGRES_URL';

/** The newest installed PostgreSQL's `bin` directory (Debian's layout), or undefined. */
function binDir(): string | undefined {
  if (bin !== undefined) return bin === null ? undefined : bin;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  bin = newest === undefined ? null : join(root, newest, 'bin');
  return bin ?? undefined;
}
let bin: string | null | undefined;

/** PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user (uid, gid). */
function postgresUser(): { readonly uid: number; readonly gid: number } | undefined {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return uid === undefined || gid === undefined ? undefined : { uid: Number(uid), gid: Number(gid) };
}
const asRoot = (): boolean => process.getuid?.() === 0;

/** Whether the PostgreSQL tests can run here: a server was given, or one can be started. */
export function postgresAvailable(): boolean {
  if (process.env[GIVEN] !== undefined) return true;
  installed ??= binDir() !== undefined && (!asRoot() || (postgresUser() !== undefined && spawnSync('runuser', ['--help'], { stdio: 'ignore' }).status === 0));
  return installed;
}
let installed: boolean | undefined;

/** Why the PostgreSQL tests cannot run here ({@link POSTGRES_MISSING}), or undefined when they can: for `skippedBecause`. */
export const postgresMissing = (): string | undefined => (postgresAvailable() ? undefined : POSTGRES_MISSING);

/** Under CI a missing PostgreSQL fails instead of skipping: the store is part of what CI must check. */
export function requirePostgres(): void {
  if (process.env['CI'] === 'true' && !postgresAvailable()) throw new Error(`CI=true but ${POSTGRES_MISSING}`);
}

/** The schema names {@link testSchema} gave in this test file (each file has its own module instance). */
const madeSchemas = new Set<string>();

/** A fresh schema name for one test (or one file): tests sharing a server never see each other's tables. */
export function testSchema(prefix = 'ts'): string {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  madeSchemas.add(schema);
  return schema;
}

/**
 * Drops every schema {@link testSchema} named in this file, on the server at `url`: for a file's
 * `afterAll`, so that a long-lived server given as `TOOLSTREAM_POSTGRES_URL` does not collect them
 * (a server the tests started is deleted anyway).
 */
export async function dropTestSchemas(url: string): Promise<void> {
  if (madeSchemas.size === 0) return;
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of madeSchemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    madeSchemas.clear();
  } finally {
    await client.end();
  }
}

/** A free TCP port on the loopback interface (for a server a test starts: PostgreSQL, PgBouncer). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * The given PostgreSQL, or a fresh cluster of our own on a free loopback port, once it accepts
 * connections. `own: true` always starts one (a test that restarts or stops its server must not touch
 * the shared one).
 */
export async function startPostgres(options: { readonly own: true }): Promise<OwnPostgres>;
export async function startPostgres(options?: { readonly own?: boolean }): Promise<TestPostgres>;
export async function startPostgres(options: { readonly own?: boolean } = {}): Promise<TestPostgres | OwnPostgres> {
  const given = process.env[GIVEN];
  if (given !== undefined && options.own !== true) {
    const parsed = new URL(given);
    return { url: given, host: parsed.hostname, port: Number(parsed.port === '' ? 5432 : parsed.port), stop: async () => undefined };
  }
  const binaries = binDir();
  if (binaries === undefined) throw new Error(POSTGRES_MISSING);
  const dir = mkdtempSync(join(tmpdir(), 'toolstream-postgres-'));
  const user = asRoot() ? postgresUser() : undefined;
  if (asRoot() && user === undefined) throw new Error('running as root, and there is no `postgres` user to run PostgreSQL as');
  if (user !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const port = await freePort();
  const host = '127.0.0.1';
  const run = (command: string, args: readonly string[]) => runAs(user !== undefined, join(binaries, command), args);
  try {
    await run('initdb', ['-D', data, '-A', 'trust', '-U', 'app', '-E', 'UTF8', '--locale=C', '--no-sync']);
    const start = () =>
      run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', String(READY_MS / 1000), '-o', `-p ${port} -k ${dir} -c listen_addresses=${host}`, 'start']);
    const halt = () => run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    await start();
    return {
      url: `postgres://app@${host}:${port}/postgres`,
      host,
      port,
      stop: async () => {
        await halt();
        rmSync(dir, { recursive: true, force: true });
      },
      restart: async (downMs: number) => {
        await halt();
        await new Promise((resolve) => setTimeout(resolve, downMs));
        await start();
      },
    };
  } catch (error) {
    await run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Runs a PostgreSQL command (as the `postgres` user when `asPostgres`) without stopping the event loop
 * (initdb takes seconds: a test's timers must go on); rejects with its output when it fails. Its stdio
 * is not kept open by the server it starts (pg_ctl writes the server's output to a log file).
 */
function runAs(asPostgres: boolean, command: string, args: readonly string[]): Promise<void> {
  const [file, argv] = asPostgres ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, [...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} failed (code ${code}):\n${output.trim()}`))));
  });
}
