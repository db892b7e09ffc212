/**
 * `npm run example:fleet` (issue 27): without Redis it says what to start and exits non-zero within
 * seconds, leaving no process behind; its workers say "ready" only once connected, and refuse to start
 * without a secret, saying how to make one (with Redis it is test/examples/fleet.test.ts). Real child
 * processes; every process the example starts carries a marker in its environment, so the test finds
 * any left behind.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedPort } from './support/closedPort.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** A generous ceiling for a run of the example on a loaded machine (the "within 60 s each"). */
const CEILING_MS = 60_000;

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
  /** The pids of processes still alive that carry the run's marker (the example and its workers). */
  readonly leftBehind: readonly number[];
}

/** Runs a TypeScript file of the examples with `env`; resolves once it exited (killed at the ceiling). */
async function run(file: string, env: Readonly<Record<string, string | undefined>>): Promise<Run> {
  const marker = `fleet-example-${randomUUID()}`;
  const startedAt = performance.now();
  return new Promise((done) => {
    execFile(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: { ...process.env, ...env, FLEET_EXAMPLE_TEST: marker }, timeout: CEILING_MS }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      const leftBehind = processesWith(`FLEET_EXAMPLE_TEST=${marker}`);
      for (const pid of leftBehind) {
        try {
          process.kill(pid, 'SIGKILL'); // reported, and not left running after a failed test
        } catch {
          // it ended meanwhile
        }
      }
      done({ code, stdout, stderr, ms: performance.now() - startedAt, leftBehind });
    });
  });
}

/** The live processes whose environment holds `entry` (Linux's /proc; our own user's processes). */
function processesWith(entry: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(entry)) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return found;
}

describe('the fleet example without Redis, and its worker', () => {
  it('without Redis: says what to start, exits 1 within seconds, leaves no process behind', async () => {
    const port = await closedPort();
    const result = await run('examples/fleet.ts', { REDIS_URL: `redis://127.0.0.1:${port}` });
    console.log(`example:fleet without Redis exited ${result.code} after ${result.ms.toFixed(0)} ms`);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`Redis at 127.0.0.1:${port} is unreachable`);
    expect(result.stderr).toContain('redis-server');
    expect(result.stderr).toContain('REDIS_URL');
    expect(result.leftBehind).toEqual([]);
  });

  it('a worker says ready only once connected: without Redis it names the address and exits 1, never "ready"', async () => {
    const port = await closedPort();
    const result = await run('examples/fleet/worker.ts', { REDIS_URL: `redis://127.0.0.1:${port}`, FLEET_SECRET: 'f'.repeat(64) });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).not.toContain('ready');
    expect(result.stderr).toContain(`Redis at 127.0.0.1:${port} is unreachable`);
    expect(result.leftBehind).toEqual([]);
  });

  it('a worker without a secret says how to make one and exits 1', async () => {
    const result = await run('examples/fleet/worker.ts', { FLEET_SECRET: undefined });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('openssl rand -hex 32');
  });
});
