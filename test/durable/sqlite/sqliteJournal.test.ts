import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sqliteJournal, SqliteJournalError } from '../../../src/durable/sqlite/index.js';
import { ConfigError, createPipeline, defineTool } from '../../../src/index.js';
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
      expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe(1);
      db.close();
    }
    expect(sqliteJournal({ path }).synchronous).toBe('normal'); // the default
  });

  it('refuses a file of a newer schema, and leaves it as it was', () => {
    const path = fresh();
    sqliteJournal({ path }).close();
    const db = new Database(path);
    db.prepare("UPDATE meta SET value = 2 WHERE key = 'schema_version'").run();
    db.close();
    expect(() => sqliteJournal({ path })).toThrow(SqliteJournalError);
    expect(() => sqliteJournal({ path })).toThrow(expect.objectContaining({ code: 'schema_too_new' }));
    const after = new Database(path);
    expect(after.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe(2);
    after.close();
  });

  it('a file that is not a database fails as SQLite says (SQLITE_NOTADB), without a half-open journal', () => {
    const path = fresh();
    writeFileSync(path, 'not a database, just text that is long enough to have a header of its own '.repeat(10));
    expect(() => sqliteJournal({ path })).toThrow(expect.objectContaining({ code: 'SQLITE_NOTADB' }));
  });

  it('migrates a file opened by many journals at once exactly once', () => {
    const path = fresh();
    const journals = Array.from({ length: 5 }, () => sqliteJournal({ path }));
    journals[0]!.append('t', [{ kind: 'started', index: 0, at: 1 }]);
    for (const journal of journals) expect(journal.read('t')).toHaveLength(1);
    for (const journal of journals) journal.close();
  });

  it('a journal closed while a turn runs fails the run, and does not crash the process', async () => {
    // The lease is renewed every leaseMs / 3 while the body runs; on a closed database the renewal
    // throws at once — which escaped as an uncaught exception before it was caught like a rejection.
    const journal = sqliteJournal({ path: fresh() });
    const slow = defineTool({ name: 'slow', description: 's', input: z.object({}), execute: () => new Promise((resolve) => setTimeout(() => resolve('done'), 60)) });
    const pipeline = createPipeline({ tools: [slow], journal, approvalSecret: 'a secret that is long enough to sign with', leaseMs: 15 });
    const running = pipeline.run([{ id: '1', name: 'slow', args: {} }], { turn: 't' });
    setTimeout(() => journal.close(), 20);
    await expect(running).rejects.toMatchObject({ code: 'journal_failed', message: expect.stringMatching(/not open/) });
  });
});
