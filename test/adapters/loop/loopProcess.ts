// One process of the two-process test (twoProcesses.test.ts): a pipeline of its own on a SQLite
// journal file and the shared secret, running one provider's loop with the official SDK client
// against the test's loopback server. `start` runs the loop until it suspends; `continue` re-enters
// it from what `start` printed (read from a file) with the answers. Prints one JSON line.
//
//   node --import tsx test/adapters/loop/loopProcess.ts <start|continue> <provider> <server url> <journal.db> [input.json]
import { readFileSync } from 'node:fs';
import { sqliteJournal } from '../../../src/durable/sqlite/index.js';
import { ContinuationError } from '../../../src/adapters/loop/index.js';
import { durablePipeline, written } from './fixture.js';
import { prompt, runLoop, type Provider } from './wire.js';

const [phase, provider, url, path, input] = process.argv.slice(2) as [string, Provider, string, string, string | undefined];
const journal = sqliteJournal({ path });
try {
  const pipeline = durablePipeline(journal);
  if (phase === 'start') {
    const loop = await runLoop(provider, url, pipeline, { history: prompt(provider, 'Tidy the notes'), turn: 'conv-x' });
    console.log(JSON.stringify({ outcome: loop.outcome, messages: loop.messages, continuation: loop.continuation, pending: loop.pending, written }));
  } else {
    const given = JSON.parse(readFileSync(input!, 'utf8')) as { messages: unknown[]; continuation: unknown; answers: { token: string; answer: 'allowed-once' | 'rejected' }[] };
    try {
      const loop = await runLoop(provider, url, pipeline, { history: given.messages, turn: 'conv-x', continuation: given.continuation, answers: given.answers });
      console.log(JSON.stringify({ outcome: loop.outcome, step: loop.step, written }));
    } catch (error) {
      if (!(error instanceof ContinuationError)) throw error;
      console.log(JSON.stringify({ refused: error.code, written }));
    }
  }
} finally {
  journal.close();
}
