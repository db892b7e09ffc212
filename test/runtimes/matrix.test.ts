import { rmSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skippedBecause } from '../support/skip.js';
import { bundleCases } from './bundle.js';
import { CASES } from './cases.js';
import { EXPECTED } from './expected.js';
import { runtimes, type Ran, type Runtime } from './runners.js';

// The runtime matrix (issue 28): the same bundle of cases (cases.ts) in the suite's Node, Node 22 and 24,
// Bun, Deno, workerd (miniflare) and Chromium, each installed from the npm registry into a pinned prefix
// by `npm run runtimes` (`.ci/run` runs it first). Each runtime's test prints one line — `runtimes: deno
// 2.9.6 — 7/7 cases` — and passes when every case printed what expected.ts says. A runtime that is not
// installed or does not start is skipped with the reason, and fails under CI=true.

/** Two cores: two runtimes at a time. */
const limit = pLimit(2);
/** One runtime's whole run (start-up, the cases, shutting down): a ceiling only a hang reaches. */
const RUN_MS = 90_000;
const CI = process.env['CI'] === 'true';

const all = runtimes();
let dir: string | undefined;
const runs = new Map<Runtime, Promise<Ran>>();

/** The lines, each parsed, that are not the expected ones (by case), and how many cases passed. */
function check(lines: readonly string[]): { passed: number; got: Record<string, unknown> } {
  const got: Record<string, unknown> = {};
  for (const line of lines) {
    const { case: name, result, error } = JSON.parse(line) as { case: string; result?: unknown; error?: string };
    got[name] = error === undefined ? result : { error };
  }
  const passed = CASES.filter((name) => isDeepStrictEqual(got[name], EXPECTED[name])).length;
  return { passed, got };
}

describe('the runtime matrix', () => {
  beforeAll(async () => {
    dir = await bundleCases();
    // Started here, two at a time, and awaited by each runtime's test: the tests report in order while
    // the runtimes run concurrently.
    for (const runtime of all.filter((r) => r.missing === undefined)) {
      const run = limit(() => runtime.run(dir!, RUN_MS));
      run.catch(() => undefined); // its test reports the failure
      runs.set(runtime, run);
    }
  });
  afterAll(async () => {
    await Promise.allSettled(runs.values());
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  for (const runtime of all) {
    if (runtime.missing !== undefined && CI) {
      it(runtime.title, () => {
        throw new Error(`CI=true but ${runtime.missing}`);
      });
      continue;
    }
    it.skipIf(runtime.missing !== undefined)(skippedBecause(runtime.title, runtime.missing), async () => {
      const ran = await runs.get(runtime)!;
      const { passed, got } = check(ran.lines);
      console.log(`runtimes: ${runtime.label} ${ran.shown} — ${passed}/${CASES.length} cases`);
      if (runtime.pinned !== undefined) expect(ran.version, 'the version the runtime reports').toBe(runtime.pinned);
      expect(got).toEqual(EXPECTED);
      // The throwing observer's default report went somewhere the runtime shows (not a crash, not nowhere).
      expect(ran.log).toContain('observer broke');
    }, 2 * RUN_MS);
  }
});
