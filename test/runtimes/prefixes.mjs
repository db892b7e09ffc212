// Where each runtime of the matrix is installed, read by both `scripts/runtimes.mjs` (which installs them)
// and the matrix test (which runs them): the pinned versions live in versions.json beside this file, and
// nowhere else. Each runtime gets a prefix of its own, outside the project's node_modules: a `node`
// package among the project's devDependencies would shadow the Node the suite runs on.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** @typedef {{ package: string, version: string, bin?: string, runsOn?: string }} Pinned */

/** @type {Record<string, Pinned>} */
export const VERSIONS = JSON.parse(readFileSync(new URL('./versions.json', import.meta.url), 'utf8'));

/**
 * The folder that holds every runtime's prefix: `$TOOLSTREAM_RUNTIMES_DIR`, or `~/.cache/toolstream-runtimes`.
 * @returns {string}
 */
export function runtimesDir() {
  return process.env['TOOLSTREAM_RUNTIMES_DIR'] || join(homedir(), '.cache', 'toolstream-runtimes');
}

/**
 * The npm prefix a runtime is installed into: `<runtimesDir>/<package>@<version>`.
 * @param {string} name a key of versions.json
 * @returns {string}
 */
export function prefixOf(name) {
  const pinned = pinnedOf(name);
  return join(runtimesDir(), `${pinned.package}@${pinned.version}`);
}

/**
 * The runtime's executable in its prefix (npm links it into node_modules/.bin), or undefined for a
 * package that is a library run by another runtime (miniflare, run by node22).
 * @param {string} name
 * @returns {string | undefined}
 */
export function binaryOf(name) {
  const pinned = pinnedOf(name);
  return pinned.bin === undefined ? undefined : join(prefixOf(name), 'node_modules', '.bin', pinned.bin);
}

/**
 * @param {string} name
 * @returns {Pinned}
 */
function pinnedOf(name) {
  const pinned = VERSIONS[name];
  if (pinned === undefined) throw new Error(`no runtime named ${name} in test/runtimes/versions.json`);
  return pinned;
}
