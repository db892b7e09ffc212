import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * Bundles the cases once for every runtime: `cases.ts` with the library, rxjs, zod and ai inlined, as
 * one ES module (`cases.js`), in a new temporary folder beside the hosts that run it (`hosts/`: Node,
 * Bun and Deno's `run.mjs`, workerd's `worker.mjs` and its `miniflare.mjs`, Chromium's `page.html`).
 * Resolves to the folder; the caller removes it.
 *
 * @example
 * ```ts
 * const dir = await bundleCases();
 * ```
 */
export async function bundleCases(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'toolstream-runtimes-'));
  await build({
    entryPoints: [join(import.meta.dirname, 'cases.ts')],
    outfile: join(dir, 'cases.js'),
    bundle: true,
    // The core loads with web-standard APIs only: a `node:` import left in it fails the bundle here,
    // before any runtime runs. Node, Bun and Deno run this same bundle.
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    logLevel: 'silent',
  });
  for (const host of ['run.mjs', 'worker.mjs', 'miniflare.mjs', 'page.html']) copyFileSync(join(import.meta.dirname, 'hosts', host), join(dir, host));
  return dir;
}
