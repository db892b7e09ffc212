import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The suite's harness, run on the fixtures in `fixtures/` by a vitest of its own (their config is the
 * suite's, with their include): what a failed set-up leaves running is killed, and the run ends with
 * what it skipped and why.
 */
const vitest = resolve('node_modules/vitest/vitest.mjs');
const dir = mkdtempSync(join(tmpdir(), 'toolstream-harness-'));
const pidsFile = join(dir, 'pids');
let run: { readonly code: number | null; readonly stdout: string; readonly stderr: string };

beforeAll(async () => {
  run = await new Promise((resolve) =>
    execFile(
      process.execPath,
      [vitest, 'run', '--config', 'test/support/fixtures/vitest.config.ts', '--reporter', 'default', '--reporter', './test/support/skipReporter.ts'],
      { env: { ...process.env, LEAKY_PIDS: pidsFile, CI: '', NO_COLOR: '1' }, encoding: 'utf8', timeout: 110_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
    ),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether `pid` runs (a zombie waiting to be reaped does not). */
function running(pid: number): boolean {
  try {
    return !/ Z /.test(readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\)/, ''));
  } catch {
    return false;
  }
}

describe('the test harness (a vitest of its own, on test/support/fixtures)', () => {
  it.runIf(process.platform === 'linux')('kills what a set-up that timed out started, its own process group included, and says so', () => {
    expect(run.stdout + run.stderr).toMatch(/Hook timed out in 1000ms/);
    const pids = readFileSync(pidsFile, 'utf8').trim().split(' ').map(Number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(running(pid), `process ${pid} still runs`).toBe(false);
    expect(run.stderr).toMatch(/Killed 2 process\(es\) the tests started and left running/);
    expect(run.stderr).toContain('test/support/fixtures/leakyHook.fixture.ts: pid');
  });

  it('fails a file whose tests let a process warning be printed, and not for one a test took', () => {
    expect(run.stdout + run.stderr).toMatch(/FAIL {2}test\/support\/fixtures\/warns\.fixture\.ts/);
    expect(run.stdout + run.stderr).toMatch(/let 1 process warning\(s\) through, which Node printed[^\n]*\n {2}FixtureWarning: let through/);
    expect(run.stderr).not.toMatch(/FixtureWarning: taken/);
  });

  it('ends the run with what it skipped, each with why', () => {
    const report = run.stdout.slice(run.stdout.indexOf(' Skipped: '));
    expect(report.split('\n').slice(0, 5)).toEqual([
      ' Skipped: 4 group(s), 5 test(s):',
      '   test/support/fixtures/skips.fixture.ts › a group that needs a thing (skipped: no thing here: install it) [2 tests]',
      '   test/support/fixtures/skips.fixture.ts › a group that ran > skips itself — the note says why',
      '   test/support/fixtures/skips.fixture.ts › a group that ran > is left out, for no stated reason — (no reason given: name it in the title, see test/support/skip.ts)',
      '   test/support/fixtures/skips.fixture.ts › a group that ran > is still to write — todo',
    ]);
  });
});
