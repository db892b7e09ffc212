/**
 * postgresJournal through PgBouncer in transaction mode, where consecutive statements of one client may
 * run on different server connections: what works there keeps no session state. PgBouncer multiplexes
 * the journal's pools onto two server connections; the store contract, several stores creating the
 * schema at once, and a durable turn run and resumed all go through it.
 *
 * Skipped where `pgbouncer` is not installed (`apt-get install -y pgbouncer`), also under CI: the
 * session-state test of postgresJournal.test.ts pins the same property on PostgreSQL alone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool } from '../../../src/index.js';
import { postgresJournal } from '../../../src/durable/postgres/index.js';
import { openPostgresJournal } from '../../../src/durable/postgres/postgresJournal.js';
import { freePort, postgresMissing, requirePostgres, startPostgres, testSchema, dropTestSchemas, type TestPostgres } from '../../support/postgres.js';
import { skippedBecause } from '../../support/skip.js';
import { READY_MS } from '../../support/timing.js';
import { journalStoreContract } from '../journalStoreContract.js';

requirePostgres();
const hasBouncer = spawnSync('pgbouncer', ['--version'], { stdio: 'ignore' }).status === 0;
const missing = postgresMissing() ?? (hasBouncer ? undefined : 'no pgbouncer: `apt-get install -y pgbouncer`');
const asRoot = process.getuid?.() === 0;

/** PgBouncer in transaction mode in front of `server`, two server connections; resolves once it accepts connections. */
async function startBouncer(server: TestPostgres): Promise<{ readonly url: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'toolstream-pgbouncer-'));
  const port = await freePort();
  writeFileSync(join(dir, 'users.txt'), '"app" ""\n');
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `postgres = host=${server.host} port=${server.port} dbname=postgres user=app`,
      '[pgbouncer]',
      `listen_addr = 127.0.0.1`,
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 2',
      'max_client_conn = 200',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  // PgBouncer refuses to run as root.
  if (asRoot) {
    const { uid, gid } = { uid: Number(spawnSync('id', ['-u', 'postgres']).stdout), gid: Number(spawnSync('id', ['-g', 'postgres']).stdout) };
    chownSync(dir, uid, gid);
    for (const file of ['users.txt', 'pgbouncer.ini']) chownSync(join(dir, file), uid, gid);
  }
  const [command, args] = asRoot ? ['runuser', ['-u', 'postgres', '--', 'pgbouncer', join(dir, 'pgbouncer.ini')]] : ['pgbouncer', [join(dir, 'pgbouncer.ini')]];
  const bouncer = spawn(command as string, args as string[], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => bouncer.once('exit', () => resolve()));
  const url = `postgres://app@127.0.0.1:${port}/postgres`;
  const pg = (await import('pg')).default;
  const deadline = performance.now() + READY_MS;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (performance.now() > deadline || bouncer.exitCode !== null) {
        bouncer.kill('SIGKILL');
        let log = '';
        try {
          log = readFileSync(join(dir, 'pgbouncer.log'), 'utf8');
        } catch {
          // none
        }
        throw new Error(`pgbouncer did not accept connections on ${url}: ${String(error)}\n${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    stop: async () => {
      // runuser passes SIGTERM on to pgbouncer, and waits for it.
      bouncer.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let server: TestPostgres;
let bouncer: Awaited<ReturnType<typeof startBouncer>>;
beforeAll(async () => {
  if (missing !== undefined) return;
  server = await startPostgres();
  bouncer = await startBouncer(server);
});
afterAll(async () => {
  await bouncer?.stop();
  if (server !== undefined) await dropTestSchemas(server.url);
  await server?.stop();
});

describe.skipIf(missing !== undefined)(skippedBecause('postgresJournal through PgBouncer in transaction mode (two server connections)', missing), () => {
  it('multiplexes: five clients at once share at most two server connections (the premise of the rest)', async () => {
    const pg = (await import('pg')).default;
    const pool = new pg.Pool({ connectionString: bouncer.url, max: 5 });
    try {
      const pids = await Promise.all(Array.from({ length: 5 }, () => pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)')));
      expect(new Set(pids.map((result) => result.rows[0]!.pid)).size).toBeLessThanOrEqual(2);
    } finally {
      await pool.end();
    }
  });

  const local = { param: () => Date.now(), process: () => Date.now() };
  journalStoreContract(
    'postgresJournal through PgBouncer (transaction mode)',
    () => {
      const schema = testSchema('bouncer');
      const open = () => openPostgresJournal({ connectionString: bouncer.url }, { schema }, local);
      return { store: open(), reopen: open };
    },
    { durable: true },
  );

  it('several stores create the schema at once, and a durable turn runs and resumes, on the database\'s clock', async () => {
    const schema = testSchema('bouncer_turn');
    const stores = Array.from({ length: 4 }, () => postgresJournal({ connectionString: bouncer.url }, { schema }));
    try {
      expect(await Promise.all(stores.map((store, n) => store.acquire(`t${n}`, 'me', 60_000)))).toEqual([1, 1, 1, 1]);
      const ran: string[] = [];
      const write = defineTool({ name: 'write', description: 'w', input: z.object({ n: z.number() }), execute: ({ n }) => (ran.push(`w${n}`), `wrote ${n}`) });
      const pipeline = (n: number) => createPipeline({ tools: [write], journal: stores[n]!, approvalSecret: 'an approval secret of 32 bytes or more' });
      const calls = [0, 1, 2].map((n) => ({ id: `c${n}`, name: 'write', args: { n } }));
      const results = await pipeline(0).run(calls, { turn: 'turn' });
      const resumed = await pipeline(3).resume('turn');
      expect(resumed.map((r) => r.content)).toEqual(results.map((r) => r.content));
      expect(ran).toEqual(['w0', 'w1', 'w2']);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });
});
