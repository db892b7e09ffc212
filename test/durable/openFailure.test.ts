/**
 * A store that fails as a turn opens — its lease cannot be taken, or the turn cannot be read (Redis away,
 * a broken file) — fails the run with `DurableTurnError` `journal_failed`, the store's error as its
 * cause, as a failure mid-run does; nothing runs. It used to reach the caller as the source's failure
 * (`SourceError` `source_failed`, "the source of tool calls failed after 0 call(s)"), which says nothing
 * of the journal and is not what `redisJournal`'s TSDoc promises. Found by issue 29's cluster scenarios.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, DurableTurnError, memoryJournal, type JournalStore } from '../../src/index.js';

const SECRET = 'an approval secret of 32 bytes or more';
const down = new Error('Connection is closed.');

function pipelineOn(store: JournalStore, ran: string[]) {
  const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (ran.push('write'), 'wrote') });
  return createPipeline({ tools: [write], journal: store, approvalSecret: SECRET });
}

const failing: Record<string, (store: JournalStore) => JournalStore> = {
  'acquire rejects': (store) => ({ ...store, acquire: () => Promise.reject(down) }),
  'acquire throws': (store) => ({
    ...store,
    acquire: () => {
      throw down;
    },
  }),
  'read rejects once the lease is taken': (store) => ({ ...store, read: () => Promise.reject(down) }),
};

describe('a store that fails as the turn opens', () => {
  for (const [how, make] of Object.entries(failing)) {
    it(`${how}: journal_failed, with the store's error as its cause; nothing runs`, async () => {
      const ran: string[] = [];
      const error: unknown = await pipelineOn(make(memoryJournal()), ran)
        .run([{ id: 'w', name: 'write', args: {} }], { turn: 't' })
        .then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(DurableTurnError);
      expect(error).toMatchObject({ code: 'journal_failed', cause: down, message: expect.stringContaining('Connection is closed.') });
      expect(ran).toEqual([]);
    });
  }

  it('a resume too', async () => {
    const journal = memoryJournal();
    const ran: string[] = [];
    await pipelineOn(journal, ran).run([{ id: 'w', name: 'write', args: {} }], { turn: 't' });
    const broken: JournalStore = { ...journal, acquire: () => Promise.reject(down) };
    await expect(pipelineOn(broken, ran).resume('t')).rejects.toMatchObject({ code: 'journal_failed', cause: down });
    expect(ran).toEqual(['write']);
  });

  it('a turn another process holds is still turn_leased, not journal_failed', async () => {
    const journal = memoryJournal();
    await journal.acquire('t', 'someone else', 60_000);
    await expect(pipelineOn(journal, []).run([{ id: 'w', name: 'write', args: {} }], { turn: 't' })).rejects.toMatchObject({ code: 'turn_leased' });
  });
});
