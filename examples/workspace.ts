// The demo's workspace: a throwaway directory with a few files, four real tools on it, the policies
// that keep them there, and an approver for writes. `npm start` (examples/demo.ts) and the agent loops
// (examples/agents/*.ts) all work on it.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { z } from 'zod';
import { askTools, defineTool, type AnyTool, type Approver, type PrePolicy } from '../src/index.js';
import { pathSandbox } from '../src/node/index.js';

export interface WorkspaceOptions {
  /** Where to say what the approver does; default: nowhere. (What runs, and when, the pipeline's events tell.) */
  readonly log?: (line: string) => void;
  /** A pause before `list_dir` and `read_file` answer, to see them overlap; default 0. */
  readonly pauseMs?: number;
  /**
   * Approve writes without asking. Default: ask at the terminal — and when there is none (a pipe, CI, a
   * server) reject them: approving has to be asked for, never what happens when nobody can answer.
   */
  readonly yes?: boolean;
  /** Told when the approval prompt opens (`true`) and closes, so a caller can hold its log lines meanwhile. */
  readonly onPrompt?: (open: boolean) => void;
  /**
   * Use this directory (created, and given the demo's files, when it has none) instead of a fresh
   * temporary one: a server that restarts keeps its workspace. `close()` then leaves it.
   */
  readonly dir?: string;
}

export interface Workspace {
  /** The directory: `notes/todo.md`, `src/app.ts`, `README.md`. */
  readonly root: string;
  /** `list_dir`, `read_file`, `search` (parallel) and `write_file` (exclusive). */
  readonly tools: readonly AnyTool[];
  /** `pathSandbox({ root })`, then `askTools(['write_file'])`. */
  readonly pre: readonly PrePolicy[];
  /** Approves at once with `yes`; else asks at the terminal, and rejects when stdin is not one. */
  readonly approve: Approver;
  /** Deletes the directory. */
  close(): Promise<void>;
}

/** Creates the workspace in a fresh temporary directory. */
export async function openWorkspace(options: WorkspaceOptions = {}): Promise<Workspace> {
  const { log = () => {}, pauseMs = 0, yes = false, dir, onPrompt = () => {} } = options;
  const root = dir === undefined ? await mkdtemp(join(tmpdir(), 'toolstream-demo-')) : resolve(dir);
  if (dir === undefined || (await readdir(root).catch(() => [])).length === 0) {
    await mkdir(join(root, 'notes'), { recursive: true });
    await mkdir(join(root, 'src'), { recursive: true });
    await writeFile(join(root, 'notes/todo.md'), '- TODO: write tests\n- TODO: ship it\n- TODO: tell people\n');
    await writeFile(join(root, 'src/app.ts'), 'export const greet = (name: string) => `hello ${name}`; // TODO: i18n\n');
    await writeFile(join(root, 'README.md'), '# demo workspace\n');
  }

  const at = (path: string) => resolve(root, path); // pathSandbox has made it absolute and kept it inside
  const pause = () => new Promise((done) => setTimeout(done, pauseMs));

  const tools = [
    defineTool({
      name: 'list_dir', description: 'List a directory', input: z.object({ path: z.string() }), mode: 'parallel',
      execute: async ({ path }) => (await pause(), readdir(at(path))),
    }),
    defineTool({
      name: 'read_file', description: 'Read a UTF-8 file', input: z.object({ path: z.string() }), mode: 'parallel',
      execute: async ({ path }, { signal }) => (await pause(), readFile(at(path), { encoding: 'utf8', signal })),
    }),
    defineTool({
      name: 'search', description: 'Find lines containing a pattern', input: z.object({ pattern: z.string(), path: z.string() }),
      mode: 'parallel',
      execute: async ({ pattern, path }) => {
        const hits: string[] = [];
        for (const file of await readdir(at(path), { recursive: true })) {
          const text = await readFile(at(join(path, file)), 'utf8').catch(() => '');
          text.split('\n').forEach((line, i) => line.includes(pattern) && hits.push(`${relative(root, at(join(path, file)))}:${i + 1}: ${line}`));
        }
        return hits.join('\n');
      },
    }),
    defineTool({
      name: 'write_file', description: 'Write a file', input: z.object({ path: z.string(), content: z.string() }), mode: 'exclusive',
      execute: async ({ path, content }, { signal }) => (await writeFile(at(path), content, { signal }), `wrote ${content.length} characters`),
    }),
  ];

  const approve: Approver = async ({ tool, args, reasons }, signal) => {
    const question = `approve ${tool.name} ${JSON.stringify(args)} (${reasons.join('; ')})?`;
    if (yes) {
      log(`  ? ${question} → allowed once (--yes)`);
      return 'allowed-once';
    }
    if (!process.stdin.isTTY) {
      log(`  ? ${question} → rejected: nobody can answer here (not a terminal); pass --yes to approve`);
      return 'rejected';
    }
    onPrompt(true);
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    try {
      const answer = await prompt.question(`  ? ${question} [y/N] `, { signal });
      return /^y(es)?$/i.test(answer.trim()) ? 'allowed-once' : 'rejected';
    } finally {
      prompt.close();
      onPrompt(false);
    }
  };

  return {
    root,
    tools,
    pre: [pathSandbox({ root }), askTools(['write_file'], 'it writes to the workspace')],
    approve,
    close: () => (dir === undefined ? rm(root, { recursive: true, force: true }) : Promise.resolve()),
  };
}
