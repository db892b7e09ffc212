/**
 * toolstream/postgres on a real PostgreSQL (test/support/postgres.ts: the one .ci/run started, else a
 * cluster of this file's own): the store contract, its options, its schema (created at once by several
 * stores, or made beforehand from the exported SQL), and what a first use says when it cannot connect.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createPipeline, defineTool, DurableTurnError } from '../../../src/index.js';
import { postgresJournal, postgresJournalSchema, PostgresJournalError } from '../../../src/durable/postgres/index.js';
import { openPostgresJournal } from '../../../src/durable/postgres/postgresJournal.js';
import { postgresAvailable, postgresMissing, requirePostgres, startPostgres, testSchema, dropTestSchemas, type TestPostgres } from '../../support/postgres.js';
import { skippedBecause } from '../../support/skip.js';
import { journalStoreContract } from '../journalStoreContract.js';

requirePostgres();
const available = postgresAvailable();

let server: TestPostgres;
let admin: pg.Pool;
beforeAll(async () => {
  if (!available) return;
  server = await startPostgres();
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
});
afterAll(async () => {
  await admin?.end();
  if (server !== undefined) await dropTestSchemas(server.url);
  await server?.stop();
});

// No database needed: the SQL is made, or the name refused, without connecting.
it('postgresJournalSchema refuses a schema name as postgresJournal does: a ConfigError naming schema', () => {
  for (const schema of ['no-dashes', 'pg_catalog', '1st', 'x'.repeat(64), 42]) {
    const make = () => postgresJournalSchema(schema as string);
    expect(make).toThrow(TypeError); // a ConfigError is a TypeError still
    expect(make).toThrow(ConfigError);
    expect(make).toThrow(expect.objectContaining({ code: 'invalid_config', where: 'postgresJournalSchema', option: 'schema' }));
    const open = () => postgresJournal({ connectionString: 'postgres://h/db' }, { schema: schema as string });
    expect(open).toThrow(expect.objectContaining({ code: 'invalid_config', where: 'postgresJournal', option: 'schema' }));
    // The same rule in the same words: only the function's name differs.
    const message = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return (error as Error).message.replace(/^\w+: /, '');
      }
      return undefined;
    };
    expect(message(make)).toBe(message(open));
  }
  expect(() => postgresJournalSchema('no-dashes')).toThrow(
    'postgresJournalSchema: `schema` must be a name of letters, digits and underscores, 63 at most, not starting with a digit or pg_; received "no-dashes"',
  );
  expect(postgresJournalSchema('agents')).toContain('CREATE SCHEMA IF NOT EXISTS "agents";');
});

describe.skipIf(!available)(skippedBecause('postgresJournal on a real PostgreSQL', postgresMissing()), () => {
  // The contract moves time with a mocked Date.now: the store is opened on the process's clock for it
  // (the database's clock is tested below), and reopened as a new pool on the same schema.
  const local = { param: () => Date.now(), process: () => Date.now() };
  journalStoreContract(
    'postgresJournal',
    () => {
      const schema = testSchema('contract');
      const open = () => openPostgresJournal({ connectionString: server.url }, { schema }, local);
      return { store: open(), reopen: open };
    },
    { durable: true },
  );

  it('checks its options at once, never echoing a connection string', () => {
    const bad: [unknown, unknown, string][] = [
      [undefined, {}, 'connection'],
      [{}, {}, 'connectionString'],
      [{ connectionString: 'mysql://u:secret@h/db' }, {}, 'connectionString'],
      [{ pool: {} }, {}, 'pool'],
      [{ connectionString: 'postgres://h/db' }, { schema: 'pg_catalog' }, 'schema'],
      [{ connectionString: 'postgres://h/db' }, { schema: 'a"; DROP TABLE x; --' }, 'schema'],
      [{ connectionString: 'postgres://h/db' }, { schema: '1abc' }, 'schema'],
      [{ connectionString: 'postgres://h/db' }, { schema: 'x'.repeat(64) }, 'schema'],
      [{ connectionString: 'postgres://h/db' }, { createSchema: 'no' }, 'createSchema'],
    ];
    for (const [connection, options, option] of bad) {
      let error: unknown;
      try {
        postgresJournal(connection as never, options as never);
      } catch (caught) {
        error = caught;
      }
      expect(error, option).toMatchObject({ code: 'invalid_config', where: 'postgresJournal', option });
      expect(String((error as Error).message)).not.toContain('secret');
    }
    expect(() => postgresJournalSchema('no-dashes')).toThrow(TypeError);
  });

  it('several stores opening a new schema at once create it once, and all of them work', async () => {
    const schema = testSchema('race');
    const stores = Array.from({ length: 6 }, () => postgresJournal({ connectionString: server.url }, { schema }));
    try {
      const epochs = await Promise.all(stores.map((store, n) => store.acquire(`turn ${n}`, 'me', 60_000)));
      expect(epochs).toEqual([1, 1, 1, 1, 1, 1]);
      const { rows } = await admin.query<{ value: number }>(`SELECT value FROM "${schema}".meta`);
      expect(rows).toEqual([{ value: 1 }]);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('two stores racing: each lease and each approval nonce goes to exactly one of them', async () => {
    const schema = testSchema('contend');
    const [a, b] = [postgresJournal({ connectionString: server.url }, { schema }), postgresJournal({ connectionString: server.url }, { schema })];
    try {
      await a.read('schema first'); // one store creates it; the race is then on the rows
      const race = (store: typeof a, owner: string) =>
        Promise.all(Array.from({ length: 40 }, async (_, n) => [await store.acquire(`lease ${n}`, owner, 60_000), await store.consume('contended', `n${n}`)] as const));
      const [byA, byB] = await Promise.all([race(a, 'a'), race(b, 'b')]);
      for (let n = 0; n < 40; n++) {
        expect([byA[n]![0], byB[n]![0]].filter((epoch) => epoch !== undefined), `lease ${n}`).toEqual([1]);
        expect([byA[n]![1], byB[n]![1]].filter(Boolean), `nonce ${n}`).toEqual([true]);
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('keeps no session state on its connections (PgBouncer in transaction mode): no prepared statements, advisory locks, temporary tables or settings', async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 1 }); // every statement on the one connection we then inspect
    const journal = postgresJournal({ pool }, { schema: testSchema('session') });
    try {
      const lease = { turn: 't', owner: 'me', epoch: (await journal.acquire('t', 'me', 60_000))! };
      await journal.append('t', [{ kind: 'started', index: 0, at: 1 }], lease);
      await journal.append('t', [{ kind: 'ended', at: 1 }], lease);
      await journal.renew(lease, 60_000);
      await journal.consume('t', 'n');
      await journal.read('t\u0000p');
      await journal.release(lease);
      expect(await journal.prune({ finishedBefore: 2 })).toBe(1);
      const { rows } = await pool.query<{ prepared: string; advisory: string; temporary: boolean; changed: string }>(
        `SELECT (SELECT count(*) FROM pg_prepared_statements) AS prepared,
                (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS advisory,
                pg_my_temp_schema() <> 0 AS temporary,
                (SELECT count(*) FROM pg_settings WHERE source = 'session') AS changed`,
      );
      expect(rows).toEqual([{ prepared: '0', advisory: '0', temporary: false, changed: '0' }]);
    } finally {
      await journal.close();
      await pool.end();
    }
  });

  it('createSchema: false creates nothing: it fails schema_missing until the exported SQL made the tables, then works', async () => {
    const schema = testSchema('ddl');
    const journal = postgresJournal({ pool: admin }, { schema, createSchema: false });
    await expect(journal.read('t')).rejects.toMatchObject({ name: 'PostgresJournalError', code: 'schema_missing', message: expect.stringContaining(`postgresJournalSchema("${schema}")`) });
    const { rows } = await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    expect(rows).toEqual([]); // nothing was created
    await admin.query(postgresJournalSchema(schema));
    const lease = { turn: 't', owner: 'me', epoch: (await journal.acquire('t', 'me', 60_000))! };
    expect(await journal.append('t', [{ kind: 'started', index: 0, at: 1 }], lease)).toBe(true);
    expect(await journal.read('t')).toEqual([{ kind: 'started', index: 0, at: 1 }]);
    await journal.close(); // a pool given stays the caller's
    expect((await admin.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('a wrong user or database: connection_failed at the first use, naming host and port and PostgreSQL\'s reason, never the password', async () => {
    const { port } = new URL(server.url);
    const journal = postgresJournal({ connectionString: `postgres://nobody:s3cret-pw@127.0.0.1:${port}/no_such_db` });
    const error: unknown = await journal.acquire('t', 'me', 1_000).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(PostgresJournalError);
    expect(error).toMatchObject({ code: 'connection_failed', message: expect.stringMatching(new RegExp(`127\\.0\\.0\\.1:${port}: .*nobody`)) });
    expect((error as Error).message).not.toContain('s3cret');
    await journal.close();
  });

  it('a schema of a newer toolstream is refused: schema_too_new', async () => {
    const schema = testSchema('newer');
    await admin.query(postgresJournalSchema(schema));
    await admin.query(`UPDATE "${schema}".meta SET value = 99`);
    await expect(postgresJournal({ pool: admin }, { schema }).read('t')).rejects.toMatchObject({ code: 'schema_too_new' });
  });

  it('leases expire on the database\'s clock: app servers whose clocks are skewed an hour still agree', async () => {
    const schema = testSchema('clock');
    const [a, b] = [postgresJournal({ connectionString: server.url }, { schema }), postgresJournal({ connectionString: server.url }, { schema })];
    const realNow = Date.now;
    try {
      expect(await a.acquire('t', 'a', 60_000)).toBe(1);
      Date.now = () => realNow() + 3_600_000; // b's clock runs an hour ahead: on its own clock a's lease expired long ago
      expect(await b.acquire('t', 'b', 60_000)).toBeUndefined();
      Date.now = () => realNow() - 3_600_000;
      expect(await b.acquire('u', 'b', 1)).toBe(1); // a 1 ms lease, on a clock an hour behind: it still expires
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await a.acquire('u', 'a', 60_000)).toBe(2);
    } finally {
      Date.now = realNow;
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe.skipIf(!available)(skippedBecause('postgresJournal when the database cannot be reached', postgresMissing()), () => {
  const write = (ran: string[]) => defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (ran.push('write'), 'wrote') });

  it('a wrong port or a database that is down: journal_failed at the first use, naming host and port, never the password; nothing runs', async () => {
    const own = await startPostgres({ own: true });
    const up = postgresJournal({ connectionString: own.url.replace('app@', 'app:s3cret-pw@') });
    expect(await up.acquire('before', 'me', 1_000)).toBe(1);
    await own.stop(); // the database goes down under a journal already in use
    const downs = [up, postgresJournal({ connectionString: `postgres://app:s3cret-pw@127.0.0.1:${own.port}/postgres` })];
    for (const journal of downs) {
      const ran: string[] = [];
      const pipeline = createPipeline({ tools: [write(ran)], journal, approvalSecret: 'an approval secret of 32 bytes or more' });
      const error: unknown = await pipeline.run([{ id: 'w', name: 'write', args: {} }], { turn: 't' }).then(
        (results) => results,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DurableTurnError);
      expect(error).toMatchObject({ code: 'journal_failed' });
      const cause = (error as DurableTurnError).cause;
      expect(cause).toBeInstanceOf(PostgresJournalError);
      expect(cause).toMatchObject({ code: 'connection_failed', message: expect.stringContaining(`127.0.0.1:${own.port}`) });
      expect(JSON.stringify([String(error), String(cause), (cause as Error).message])).not.toContain('s3cret');
      expect(ran).toEqual([]);
      await journal.close();
    }
  });
});
