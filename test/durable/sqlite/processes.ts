/**
 * Runs a journal child (`journalChild.ts`, or `test/fleet/redisJournalChild.ts`) as real processes: bundled once per test file with tsup (esbuild) into
 * node_modules/.cache — plain node starts it in a fraction of tsx's time, which matters when a test
 * spawns and kills it fifty times — and spawned with pipes a test can read lines from and write to.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Bundles the child (by default the SQLite one); resolves to its path and a function that removes it. */
export async function buildChild(entry = 'test/durable/sqlite/journalChild.ts'): Promise<{ readonly script: string; readonly remove: () => void }> {
  const cache = join(root, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const outDir = mkdtempSync(join(cache, 'toolstream-journal-child-'));
  await build({
    entry: { child: join(root, entry) },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    external: ['better-sqlite3', 'ioredis'], // loaded from node_modules (one a native module); the rest is bundled: faster to start
    config: false,
    silent: true,
    dts: false,
    sourcemap: false,
    splitting: false,
  });
  return { script: join(outDir, 'child.js'), remove: () => rmSync(outDir, { recursive: true, force: true }) };
}

/** A running child: its lines as they come, and how it ended. */
export interface Child {
  readonly process: ChildProcessWithoutNullStreams;
  /** Resolves with the next line it prints. */
  nextLine(): Promise<string>;
  /** Resolves once it exited: its code, or the signal that ended it, and everything it wrote to stderr. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly stderr: string }>;
}

export function startChild(script: string, args: readonly string[]): Child {
  const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio: 'pipe' });
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const waiter = waiting.shift();
    if (waiter === undefined) lines.push(line);
    else waiter(line);
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return {
    process: child,
    nextLine: () => {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      return new Promise((resolve, reject) => {
        waiting.push(resolve);
        void exited.then(({ code, signal, stderr }) => reject(new Error(`the child exited (${signal ?? code}) before printing a line: ${stderr}`)));
      });
    },
    exited,
  };
}
