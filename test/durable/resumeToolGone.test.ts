import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, memoryJournal } from '../../src/index.js';
import { ProcessView } from '../support/crashes.js';
import { deferred } from '../support/deferred.js';

const SECRET = 'a test secret that is long enough to sign with';

// A process crashed while a body ran; the process that resumes the turn no longer has that tool (a
// deploy removed or renamed it). The call must still get a result — it started, so its effect is
// unknown — and the resume must end, not hang on a call whose tool it cannot look up.
describe('resuming a turn whose started call names a tool this pipeline no longer has', () => {
  it.each([['parallel'], ['exclusive']] as const)('answers it outcome_unknown and ends (%s tool before)', async (mode) => {
    const journal = memoryJournal();
    const started = deferred();
    const dying = new ProcessView(journal);
    const gone = defineTool({ name: 'gone', description: 'g', input: z.object({}), mode, execute: () => (started.resolve(), new Promise<never>(() => {})) });
    const kept = defineTool({ name: 'kept', description: 'k', input: z.object({}), execute: () => 'ran' });
    void createPipeline({ tools: [gone, kept], journal: dying, approvalSecret: SECRET }).run(
      [{ id: 'a', name: 'gone', args: {} }, { id: 'b', name: 'kept', args: {} }],
      { turn: 't' },
    );
    await started.promise;
    dying.crash('t');

    const results = await createPipeline({ tools: [kept], journal, approvalSecret: SECRET }).resume('t');
    expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
      ['a', 'error', 'outcome_unknown'],
      ['b', 'ok', undefined],
    ]);
  });
});
