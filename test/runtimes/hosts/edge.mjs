// Runs examples/edge/worker.ts (bundled to worker.js beside this file) in workerd under miniflare, run
// by Node 22: `node edge.mjs <miniflare's prefix> <requests JSON>`. Sends each request, in order, and
// prints one JSON line per response: `{ status, body }`. No `nodejs_compat`: the Worker gets web APIs only.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [prefix, requests] = process.argv.slice(2);
const require = createRequire(join(prefix, 'package.json'));
const { Miniflare } = await import(pathToFileURL(require.resolve('miniflare')).href);
const here = dirname(fileURLToPath(import.meta.url));
const mf = new Miniflare({ modules: [{ type: 'ESModule', path: join(here, 'worker.js') }], modulesRoot: here, compatibilityDate: '2026-07-01' });
try {
  for (const { method, body } of JSON.parse(requests)) {
    const response = await mf.dispatchFetch('http://localhost/', { method, ...(body === undefined ? {} : { body }) });
    const text = await response.text();
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    console.log(JSON.stringify({ status: response.status, body: parsed }));
  }
} finally {
  await mf.dispose();
}
