// Installs the runtimes of the matrix test (test/runtimes/) from the npm registry, each into a pinned
// prefix of its own (`npm run runtimes`; `.ci/run` runs it before the tests). Versions: test/runtimes/
// versions.json. Prefixes: `$TOOLSTREAM_RUNTIMES_DIR/<package>@<version>`, by default under
// ~/.cache/toolstream-runtimes. A runtime already there (its binary answers `--version`) is left as it
// is. One line per runtime: installed, already there, or failed with the reason. Always exits 0: a
// runtime that failed is reported by the test as skipped (and fails the run under CI=true), which says
// more than a stopped CI script would.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { binaryOf, prefixOf, VERSIONS } from '../test/runtimes/prefixes.mjs';

/** What answers for a runtime: its own binary, or (miniflare) workerd's, run by the runtime it needs. */
function probe(name) {
  const pinned = VERSIONS[name];
  if (pinned.runsOn === undefined) return [binaryOf(name), ['--version']];
  return [binaryOf(pinned.runsOn), ['-e', 'require("miniflare"); console.log(require("miniflare/package.json").version)']];
}

/** The version line the runtime prints, or undefined when it does not start. */
function answers(name) {
  const [file, args] = probe(name);
  if (file === undefined) return undefined;
  try {
    const out = execFileSync(file, args, { cwd: prefixOf(name), encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] });
    return out.trim().split('\n')[0];
  } catch {
    return undefined;
  }
}

function install(name) {
  const pinned = VERSIONS[name];
  const spec = `${pinned.package}@${pinned.version}`;
  const before = answers(name);
  if (before !== undefined) return `already there (${before})`;
  const prefix = prefixOf(name);
  mkdirSync(prefix, { recursive: true });
  try {
    execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', spec], {
      encoding: 'utf8',
      timeout: 600_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    // npm's first lines say what went wrong (its code, the request); the rest is advice and a log's path.
    const said = `${error.stderr ?? ''}`
      .split('\n')
      .map((line) => line.replace(/^npm (error|ERR!)\s*/, '').trim())
      .filter((line) => line !== '' && !/complete log of this run|behind a proxy|npm help/.test(line))
      .slice(0, 3)
      .join(' / ');
    return `failed: npm install ${spec}: ${said || error.message}`;
  }
  const after = answers(name);
  return after === undefined ? `failed: ${spec} installed in ${prefix}, but ${probe(name)[0]} does not start` : `installed (${after})`;
}

// node22 before miniflare, which runs on it.
for (const name of Object.keys(VERSIONS)) {
  const pinned = VERSIONS[name];
  console.log(`runtimes: ${name} ${pinned.package}@${pinned.version} — ${install(name)} → ${prefixOf(name)}`);
}
