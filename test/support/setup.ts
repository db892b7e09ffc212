// Loaded before every test file (`setupFiles` in vitest.config.ts): marks the processes the file's tests
// start, and kills those still running once the file ended (see leftovers.ts).
import { randomUUID } from 'node:crypto';
import { afterAll, expect } from 'vitest';
import { countMarked, killMarked, MARK, RUN } from './leftovers.js';

/** How long a process may take to end by itself after the file's own `afterAll` hooks stopped it. */
const GRACE_MS = 2000;

const file = expect.getState().testPath?.replace(`${process.cwd()}/`, '') ?? `file ${randomUUID()}`;
const mark = `${process.env[RUN] ?? `pid${process.pid}`}:${file}`;
process.env[MARK] = mark; // children get a copy of process.env: they, and theirs, carry it

// The last `afterAll` of the file (hooks registered first run last): its own hooks stopped what they
// started; whatever still runs after a grace is a leftover of a failed set-up or test.
afterAll(async () => {
  const deadline = performance.now() + GRACE_MS;
  while (performance.now() < deadline && countMarked(mark) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  killMarked(mark);
});
// A file's process that ends without its `afterAll` (an error that ended it early) still kills them.
process.once('exit', () => killMarked(mark));

