import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WITH_REDIS } from '../fleet/support/fleet.js';
import { redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';

requireRedis();
const root = fileURLToPath(new URL('../..', import.meta.url));

describe.skipIf(!redisAvailable())(`npm run example:fleet (${WITH_REDIS})`, () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis({ own: true }); // the example uses fixed queue names: a Redis of its own
  });
  afterAll(() => redis?.stop());

  it('an agent and two worker processes: the fleet limit holds', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/fleet.ts'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, REDIS_URL: redis.url },
      timeout: 110_000, // under the test's 120 s: a ceiling only a hang reaches (a minute was not enough at load 25)
    });
    // examples/fleet/worker.ts, forked twice by the agent; both sides import examples/fleet/contracts.ts
    expect(stdout.match(/^worker \d+ ready$/gm)).toHaveLength(2);
    expect(stdout.match(/render_page {2}ok/g)).toHaveLength(8);
    expect(stdout).toMatch(/w +word_count +ok +5 +in the agent/);
    const [, most] = /at most (\d+) at once \(fleet limit 2\)/.exec(stdout) ?? [];
    expect(Number(most)).toBeGreaterThan(0);
    expect(Number(most)).toBeLessThanOrEqual(2);
  });
});
