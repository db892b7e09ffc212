import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MIGRATIONS } from '../../../src/durable/sqlite/schema.js';
import { sqliteJournal, SqliteJournalError } from '../../../src/durable/sqlite/index.js';
import { askTools, ConfigError, createPipeline, defineTool, memoryJournal, suspendApprovals, type JournalEntry, type JournalStore } from '../../../src/index.js';
import { journalStoreContract } from '../journalStoreContract.js';

const dirs: string[] = [];
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolstream-sqlite-'));
  dirs.push(dir);
  return join(dir, 'journal.db');
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

for (const synchronous of ['normal', 'full'] as const) {
  journalStoreContract(`sqliteJournal({ synchronous: '${synchronous}' })`, () => {
    const path = fresh();
    return { store: sqliteJournal({ path, synchronous }), reopen: () => sqliteJournal({ path, synchronous }) };
  }, { durable: true });
}

describe('sqliteJournal', () => {
  it('checks its options eagerly', () => {
    const bad: [unknown, string][] = [
      [undefined, 'options'],
      [{}, 'path'],
      [{ path: '' }, 'path'],
      [{ path: ':memory:' }, 'path'],
      [{ path: fresh(), synchronous: 'off' }, 'synchronous'],
      [{ path: fresh(), synchronous: 'FULL' }, 'synchronous'],
      [{ path: fresh(), busyTimeoutMs: 0 }, 'busyTimeoutMs'],
      [{ path: fresh(), busyTimeoutMs: 1.5 }, 'busyTimeoutMs'],
      [{ path: fresh(), busyTimeoutMs: 2 ** 31 }, 'busyTimeoutMs'],
    ];
    for (const [options, option] of bad) {
      expect(() => sqliteJournal(options as never)).toThrow(ConfigError);
      expect(() => sqliteJournal(options as never)).toThrow(expect.objectContaining({ where: 'sqliteJournal', option }));
    }
    expect(() => sqliteJournal({ path: ':memory:' })).toThrow(/use memoryJournal\(\)/);
  });

  it('puts the file in WAL mode and records its schema version', () => {
    const path = fresh();
    for (const synchronous of ['normal', 'full'] as const) {
      const journal = sqliteJournal({ path, synchronous });
      expect(journal).toMatchObject({ path, synchronous });
      journal.close();
      // The journal mode is the file's (synchronous is the connection's, gone with it).
      const db = new Database(path);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe(2);
      db.close();
    }
    expect(sqliteJournal({ path }).synchronous).toBe('normal'); // the default
  });

  it('refuses a file of a newer schema, and leaves it as it was', () => {
    const path = fresh();
    sqliteJournal({ path }).close();
    const db = new Database(path);
    db.prepare("UPDATE meta SET value = 3 WHERE key = 'schema_version'").run();
    db.close();
    expect(() => sqliteJournal({ path })).toThrow(SqliteJournalError);
    expect(() => sqliteJournal({ path })).toThrow(expect.objectContaining({ code: 'schema_too_new' }));
    const after = new Database(path);
    expect(after.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe(3);
    after.close();
  });

  it('a file of version 1 (toolstream 0.1) is migrated, and the turns it holds resume: a suspended one answered, its lease taken at epoch 1', async () => {
    const path = fresh();
    // What toolstream 0.1 left: its schema, a turn suspended on an approval, and its driver's lease row.
    let ran = 0;
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (ran++, 'wrote') });
    const pipelineOn = (journal: JournalStore) =>
      createPipeline({ tools: [write], journal, approvalSecret: 'a secret that is long enough to sign with', pre: [askTools(['write'])], approve: suspendApprovals() });
    const scratch = memoryJournal();
    await pipelineOn(scratch).run([{ id: 'w', name: 'write', args: {} }], { turn: 'old' });
    const entries = (await scratch.read('old')).filter((entry: JournalEntry) => entry.kind !== 'ended'); // 0.1 wrote no `ended`
    const v1 = new Database(path);
    v1.exec(MIGRATIONS[0]!);
    v1.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT, WITHOUT ROWID; INSERT INTO meta VALUES ('schema_version', 1)");
    v1.prepare('INSERT INTO appends (turn, entries) VALUES (?, ?)').run('old', JSON.stringify(entries));
    v1.prepare('INSERT INTO leases (turn, owner, until) VALUES (?, ?, ?)').run('old', 'a process of 0.1', Date.now() - 1);
    v1.close();

    const journal = sqliteJournal({ path });
    const pipeline = pipelineOn(journal);
    const [approval] = await pipeline.pendingApprovals('old');
    expect(await pipeline.resume('old', { answers: [{ token: approval!.token, answer: 'allowed-once' }] })).toMatchObject([{ status: 'ok', content: 'wrote' }]);
    expect(ran).toBe(1);
    journal.close();
    const db = new Database(path);
    expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe(2);
    expect(db.prepare("SELECT owner, epoch FROM leases WHERE turn = 'old'").get()).toEqual({ owner: '', epoch: 1 });
    expect(db.prepare("SELECT turn FROM ended").pluck().all()).toEqual(['old']);
    db.close();
  });

  it('a file that is not a database fails as SQLite says (SQLITE_NOTADB), without a half-open journal', () => {
    const path = fresh();
    writeFileSync(path, 'not a database, just text that is long enough to have a header of its own '.repeat(10));
    expect(() => sqliteJournal({ path })).toThrow(expect.objectContaining({ code: 'SQLITE_NOTADB' }));
  });

  it('migrates a file opened by many journals at once exactly once', () => {
    const path = fresh();
    const journals = Array.from({ length: 5 }, () => sqliteJournal({ path }));
    const epoch = journals[0]!.acquire('t', 'me', 60_000)!;
    journals[0]!.append('t', [{ kind: 'started', index: 0, at: 1 }], { turn: 't', owner: 'me', epoch });
    for (const journal of journals) expect(journal.read('t')).toHaveLength(1);
    for (const journal of journals) journal.close();
  });

  it('a journal closed while a turn runs fails the run (its lease cannot be renewed), and does not crash the process', async () => {
    // The lease is renewed every leaseMs / 3 while the body runs; on a closed database the renewal
    // throws at once — which escaped as an uncaught exception before it was caught like a rejection.
    // Renewals that fail until the lease expires lose it: the run stops (or its next append fails first).
    const journal = sqliteJournal({ path: fresh() });
    const slow = defineTool({ name: 'slow', description: 's', input: z.object({}), execute: () => new Promise((resolve) => setTimeout(() => resolve('done'), 60)) });
    const pipeline = createPipeline({ tools: [slow], journal, approvalSecret: 'a secret that is long enough to sign with', leaseMs: 15 });
    const running = pipeline.run([{ id: '1', name: 'slow', args: {} }], { turn: 't' });
    setTimeout(() => journal.close(), 20);
    // Whichever notices first: a renewal failing past the lease's expiry, or the body's `finished` append.
    const error = (await running.catch((caught: unknown) => caught)) as { code?: string; message: string; cause?: { message?: string } };
    expect(['lease_lost', 'journal_failed']).toContain(error.code);
    expect(`${error.message} ${error.cause?.message}`).toMatch(/not open/);
  });
});
