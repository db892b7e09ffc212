// The run's global set-up (`globalSetup` in vitest.config.ts): an id for the run's processes to carry
// (see leftovers.ts), and, at the end, the last sweep — after every file's own — of whatever the tests
// started and left running, said on stderr when there was any.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killMarked, readLeftovers, RUN, RUN_DIR } from './leftovers.js';

export default function setup(): () => void {
  const run = randomUUID().slice(0, 8);
  const dir = mkdtempSync(join(tmpdir(), 'toolstream-test-run-'));
  process.env[RUN] = run; // the test files' processes inherit it
  process.env[RUN_DIR] = dir;
  // Interrupted (Ctrl-C), vitest exits without its teardown: the run's processes go with it.
  const onExit = () => killMarked(`${run}:`);
  process.once('exit', onExit);
  return () => {
    process.off('exit', onExit);
    killMarked(`${run}:`);
    const leftovers = readLeftovers();
    rmSync(dir, { recursive: true, force: true });
    if (leftovers.length === 0) return;
    const lines = leftovers.map((l) => `  ${l.file}: pid ${l.pid} ${l.command}`);
    process.stderr.write(`\nKilled ${leftovers.length} process(es) the tests started and left running (a test or set-up that does not stop what it starts):\n${lines.join('\n')}\n`);
  };
}
