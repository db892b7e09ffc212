import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteJournal } from '../../../src/durable/sqlite/index.js';
import { journalStoreContract } from '../journalStoreContract.js';

for (const synchronous of ['normal', 'full'] as const) {
  journalStoreContract(`sqliteJournal({ synchronous: '${synchronous}' })`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolstream-sqlite-'));
    const path = join(dir, 'journal.db');
    return {
      store: sqliteJournal({ path, synchronous }),
      reopen: () => sqliteJournal({ path, synchronous }),
      dispose: () => rmSync(dir, { recursive: true, force: true }),
    };
  });
}
