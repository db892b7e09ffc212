// Drives the Worker (worker.mjs beside it) with miniflare, run by Node 22 (miniflare needs it):
// `node miniflare.mjs <miniflare's prefix>`. Prints the versions (miniflare's, workerd's), then the
// Worker's answer, and stops workerd.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const prefix = process.argv[2];
const require = createRequire(join(prefix, 'package.json'));
const { Miniflare } = await import(pathToFileURL(require.resolve('miniflare')).href);
const here = dirname(fileURLToPath(import.meta.url));
const mf = new Miniflare({
  modules: [
    { type: 'ESModule', path: join(here, 'worker.mjs') },
    { type: 'ESModule', path: join(here, 'cases.js') },
  ],
  modulesRoot: here,
  compatibilityDate: '2026-07-01',
});
try {
  const response = await mf.dispatchFetch('http://localhost/');
  const version = require('miniflare/package.json').version;
  const workerd = createRequire(require.resolve('miniflare'))('workerd/package.json').version;
  console.log(JSON.stringify({ version, workerd }));
  console.log(await response.text());
} finally {
  await mf.dispose();
}
