/**
 * examples/edge/worker.ts, the README's Cloudflare Worker (issue 28), bundled as wrangler would (esbuild,
 * the `workerd`/`worker`/`browser` conditions) and run in workerd under miniflare: the model's calls come
 * in as JSON and go back as results in model order — one converted, one denied by the policy, one with bad
 * arguments — and a request that is not a turn gets a clear 405 or 400. Skipped with the reason when
 * miniflare is not installed (`npm run runtimes`); under CI=true that fails.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { skippedBecause } from '../support/skip.js';
import { binaryOf, prefixOf, VERSIONS } from './prefixes.mjs';
import { runProcess } from './processes.js';
import { miniflareMissing } from './runners.js';

const missing = miniflareMissing();
const CI = process.env['CI'] === 'true';
const title = 'examples/edge/worker.ts in workerd (miniflare): results in model order, the policy holds, bad requests are answered';

describe('the Cloudflare Worker example', () => {
  if (missing !== undefined && CI) {
    it(title, () => {
      throw new Error(`CI=true but ${missing}`);
    });
    return;
  }
  it.skipIf(missing !== undefined)(skippedBecause(title, missing), async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolstream-edge-'));
    try {
      // As wrangler bundles a Worker: esbuild, ES module, the conditions workerd resolves (tsconfig's
      // paths map `toolstream` to the sources here, as a user's node_modules would to the package).
      await build({ entryPoints: ['examples/edge/worker.ts'], outfile: join(dir, 'worker.js'), bundle: true, platform: 'browser', conditions: ['workerd', 'worker', 'browser'], format: 'esm', target: 'es2022', logLevel: 'silent' });
      copyFileSync(join(import.meta.dirname, 'hosts', 'edge.mjs'), join(dir, 'edge.mjs'));
      const turn = {
        calls: [
          { id: 'c1', name: 'convert_currency', args: { amount: 100, from: 'EUR', to: 'USD' } },
          { id: 'c2', name: 'delete_account', args: { account: 'acme' } },
          { id: 'c3', name: 'convert_currency', args: { amount: -5, from: 'EUR', to: 'XYZ' } },
          { id: 'c4', name: 'convert_currency', args: { amount: 1000, from: 'JPY', to: 'GBP' } },
        ],
      };
      const requests = [{ method: 'POST', body: JSON.stringify(turn) }, { method: 'GET' }, { method: 'POST', body: '{"calls": "not a list"}' }];
      const finished = await runProcess(binaryOf(VERSIONS['miniflare']!.runsOn!)!, ['edge.mjs', prefixOf('miniflare'), JSON.stringify(requests)], { cwd: dir, timeoutMs: 90_000 });
      expect(finished.code, `miniflare ended badly:\n${finished.stderr.slice(-3000)}`).toBe(0);
      const [results, get, bad] = finished.stdout.trim().split('\n').map((line) => JSON.parse(line) as { status: number; body: unknown });
      expect(results).toEqual({
        status: 200,
        body: {
          results: [
            { id: 'c1', status: 'ok', content: '{"amount":108,"currency":"USD"}' },
            { id: 'c2', status: 'denied', error: 'denied', content: expect.stringContaining('accounts are not deleted from the edge') },
            { id: 'c3', status: 'error', error: 'invalid_args', content: expect.stringContaining('amount') },
            { id: 'c4', status: 'ok', content: '{"amount":5.28,"currency":"GBP"}' },
          ],
        },
      });
      expect(get).toMatchObject({ status: 405, body: expect.stringContaining('POST the calls of a model turn') });
      expect(bad).toMatchObject({ status: 400, body: { error: 'bad_request' } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
