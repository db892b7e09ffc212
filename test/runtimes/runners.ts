import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromiumAvailable, CHROMIUM_MISSING, launchChromium } from '../support/chromium.js';
import { binaryOf, prefixOf, VERSIONS } from './prefixes.mjs';
import { runProcess } from './processes.js';

/** What a runtime printed: its version (as it reports it), the cases' lines, and what it logged beside them. */
export interface Ran {
  /** The version compared with the pinned one (under miniflare, miniflare's). */
  readonly version: string;
  /** The version as the report line says it (workerd's own, then miniflare's). */
  readonly shown: string;
  readonly lines: readonly string[];
  /** Its stderr (a browser: its console), where warnings go. */
  readonly log: string;
}

/** A runtime of the matrix. */
export interface Runtime {
  /** As printed: `node`, `bun`, `deno`, `workerd`, `chromium`. */
  readonly label: string;
  /** The test's title: the label and what is pinned of it. */
  readonly title: string;
  /** The version it must report, from versions.json; undefined where it is not ours to pin (the suite's Node, Debian's Chromium). */
  readonly pinned: string | undefined;
  /** Why it cannot run here (not installed, or its binary does not start), or undefined. */
  readonly missing: string | undefined;
  /** Runs the bundled cases in `dir` (see `bundleCases`), killed after `timeoutMs`. */
  run(dir: string, timeoutMs: number): Promise<Ran>;
}

const INSTALL = 'run `npm run runtimes` to install it';

/** Why a pinned binary cannot run: not installed, or it does not answer `--version` (undefined when it does). */
function notStarting(name: string, args: readonly string[] = ['--version'], cwd?: string): string | undefined {
  const pinned = VERSIONS[name]!;
  const binary = binaryOf(name) ?? binaryOf(pinned.runsOn!)!;
  const spec = `${pinned.package}@${pinned.version}`;
  if (!existsSync(binary)) return `${spec} is not installed (no ${binary}): ${INSTALL}`;
  const probe = spawnSync(binary, args, { cwd: cwd ?? prefixOf(name), encoding: 'utf8', timeout: 30_000 });
  if (probe.status === 0) return undefined;
  const said = `${probe.stderr ?? ''}`.trim().split('\n').slice(-2).join(' / ') || probe.error?.message || `exit ${probe.status ?? probe.signal}`;
  return `${spec} does not start (${binary}: ${said}): ${INSTALL}`;
}

/** The lines of a host that prints `{ version }` first, then the cases' lines; throws with what it said if it failed. */
function readHost(what: string, finished: Awaited<ReturnType<typeof runProcess>>): Ran {
  const lines = finished.stdout.split('\n').filter((line) => line.trim() !== '');
  if (finished.timedOut || finished.code !== 0 || lines.length === 0) {
    const how = finished.timedOut ? 'timed out (killed)' : `exited with ${finished.code ?? 'a signal'}`;
    throw new Error(`${what} ${how}\nstdout:\n${finished.stdout.slice(-2000)}\nstderr:\n${finished.stderr.slice(-4000)}`);
  }
  const { version, workerd } = JSON.parse(lines[0]!) as { version: string; workerd?: string };
  return { version, shown: workerd === undefined ? version : `${workerd} (miniflare ${version})`, lines: lines.slice(1), log: finished.stderr };
}

/** Node, Bun or Deno running `run.mjs` beside the bundle. */
function script(label: string, binary: string, pinned: string | undefined, missing: string | undefined, args: (dir: string) => string[]): Runtime {
  return {
    label,
    title: `${label} ${pinned ?? `(the suite's, ${process.versions.node})`}`,
    pinned,
    missing,
    run: async (dir, timeoutMs) => readHost(`${label} ${binary}`, await runProcess(binary, args(dir), { cwd: dir, timeoutMs })),
  };
}

const pinnedScript = (label: string, name: string, args: (dir: string) => string[]) => script(label, binaryOf(name)!, VERSIONS[name]!.version, notStarting(name), args);

/** workerd under miniflare: `miniflare.mjs` run by Node 22 dispatches one request to `worker.mjs`. */
/** Why miniflare (run by Node 22) cannot run here, or `undefined` when it can. */
export const miniflareMissing = (): string | undefined => notStarting('node22') ?? notStarting('miniflare', ['-e', 'require("miniflare")']);

function workerd(): Runtime {
  const pinned = VERSIONS['miniflare']!;
  const missing = miniflareMissing();
  return {
    label: 'workerd',
    title: `workerd (miniflare ${pinned.version})`,
    pinned: pinned.version,
    missing,
    run: async (dir, timeoutMs) => readHost('miniflare', await runProcess(binaryOf(pinned.runsOn!)!, ['miniflare.mjs', prefixOf('miniflare')], { cwd: dir, timeoutMs })),
  };
}

/** Debian's Chromium (playwright-core), on a page served with the bundle from 127.0.0.1. */
function chromium(): Runtime {
  return {
    label: 'chromium',
    title: 'chromium (Debian’s)',
    pinned: undefined,
    missing: chromiumAvailable() ? undefined : CHROMIUM_MISSING,
    run: async (dir, timeoutMs) => {
      const files: Record<string, string> = { '/': 'page.html', '/cases.js': 'cases.js' };
      const server = createServer((request, response) => {
        const file = files[request.url ?? ''];
        if (file === undefined) return void response.writeHead(404).end();
        response.writeHead(200, { 'content-type': file.endsWith('.html') ? 'text/html' : 'text/javascript' }).end(readFileSync(join(dir, file)));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const log: string[] = [];
        page.on('console', (message) => void log.push(`${message.type()}: ${message.text()}`));
        page.on('pageerror', (error) => void log.push(`pageerror: ${error.message}`));
        await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
        try {
          await page.waitForFunction(() => (window as unknown as { matrix?: { done: boolean } }).matrix?.done === true, undefined, { timeout: timeoutMs });
        } catch (error) {
          throw new Error(`chromium: the page did not finish (${error instanceof Error ? error.message : String(error)})\nconsole:\n${log.join('\n')}`);
        }
        const { lines, failure } = await page.evaluate(() => (window as unknown as { matrix: { lines: string[]; failure?: string } }).matrix);
        if (failure !== undefined) throw new Error(`chromium: the cases failed to run: ${failure}\nconsole:\n${log.join('\n')}`);
        return { version: browser.version(), shown: browser.version(), lines, log: log.join('\n') };
      } finally {
        await browser.close();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}

/**
 * Every runtime of the matrix, in the order they are reported: the suite's own Node (20) first — the
 * reference the others are compared with, run the same way — then the pinned ones, then Chromium.
 *
 * @example
 * ```ts
 * for (const runtime of runtimes()) if (runtime.missing === undefined) await runtime.run(dir, 60_000);
 * ```
 */
export function runtimes(): Runtime[] {
  return [
    script('node', process.execPath, undefined, undefined, () => ['run.mjs']),
    pinnedScript('node', 'node22', () => ['run.mjs']),
    pinnedScript('node', 'node24', () => ['run.mjs']),
    pinnedScript('bun', 'bun', () => ['run.mjs']),
    // No permission but reading the bundle's folder.
    pinnedScript('deno', 'deno', (dir) => ['run', '--no-prompt', '--no-config', '--no-lock', `--allow-read=${dir}`, 'run.mjs']),
    workerd(),
    chromium(),
  ];
}
