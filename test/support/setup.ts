// Loaded before every test file (`setupFiles` in vitest.config.ts): marks the processes the file's tests
// start, and kills those still running once the file ended (see leftovers.ts); fails a file whose tests
// let a process warning be printed.
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

// A green run prints no warnings: a process warning the file's tests let through (printed by Node) fails
// the file. A test that provokes one on purpose takes it with `capturingWarnings` (warnings.ts).
const warned: Error[] = [];
const onWarning = (warning: Error) => void warned.push(warning);
process.on('warning', onWarning);
afterAll(async () => {
  await new Promise((resolve) => setImmediate(resolve)); // Node emits a warning on the tick after it was raised
  process.off('warning', onWarning);
  if (warned.length > 0) {
    const list = warned.map((w) => `  ${w.name}: ${w.message}`).join('\n');
    throw new Error(`the tests of this file let ${warned.length} process warning(s) through, which Node printed (take one a test provokes on purpose with capturingWarnings, test/support/warnings.ts):\n${list}`);
  }
});

