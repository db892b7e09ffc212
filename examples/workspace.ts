// The demo's workspace: a throwaway directory with a few files, four real tools on it, the policies
// that keep them there, and an approver for writes. `npm start` (examples/demo.ts) and the agent loops
// (examples/agents/*.ts) all work on it.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { z } from 'zod';
import { askTools, defineTool, pathSandbox, type AnyTool, type Approver, type PrePolicy, type ToolContext } from '../src/index.js';

export interface WorkspaceOptions {
  /** Where to say what runs (each body's start and end, each approval); default: nowhere. */
  readonly log?: (line: string) => void;
  /** A pause before `list_dir` and `read_file` answer, to see them overlap; default 0. */
  readonly pauseMs?: number;
  /** Approve writes without asking; default: ask at the terminal, approve when nobody can answer. */
  readonly yes?: boolean;
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
  /** Asks at the terminal; approves at once with `yes`, or when stdin is not a terminal. */
  readonly approve: Approver;
  /** Deletes the directory. */
  close(): Promise<void>;
}

/** Creates the workspace in a fresh temporary directory. */
export async function openWorkspace(options: WorkspaceOptions = {}): Promise<Workspace> {
  const { log = () => {}, pauseMs = 0, yes = false, dir } = options;
  const root = dir === undefined ? await mkdtemp(join(tmpdir(), 'toolstream-demo-')) : resolve(dir);
  if (dir === undefined || (await readdir(root).catch(() => [])).length === 0) {
    await mkdir(join(root, 'notes'), { recursive: true });
    await mkdir(join(root, 'src'), { recursive: true });
    await writeFile(join(root, 'notes/todo.md'), '- TODO: write tests\n- TODO: ship it\n- TODO: tell people\n');
    await writeFile(join(root, 'src/app.ts'), 'export const greet = (name: string) => `hello ${name}`; // TODO: i18n\n');
    await writeFile(join(root, 'README.md'), '# demo workspace\n');
  }

  async function traced<T>(ctx: ToolContext, name: string, body: () => Promise<T>): Promise<T> {
    log(`  ▶ #${ctx.index} ${name} running`);
    try {
      return await body();
    } finally {
      log(`  ■ #${ctx.index} ${name} done`);
    }
  }
  const at = (path: string) => resolve(root, path); // pathSandbox has made it absolute and kept it inside
  const pause = () => new Promise((done) => setTimeout(done, pauseMs));

  const tools = [
    defineTool({
      name: 'list_dir', description: 'List a directory', input: z.object({ path: z.string() }), mode: 'parallel',
      execute: ({ path }, ctx) => traced(ctx, 'list_dir', async () => (await pause(), readdir(at(path)))),
    }),
    defineTool({
      name: 'read_file', description: 'Read a UTF-8 file', input: z.object({ path: z.string() }), mode: 'parallel',
      execute: ({ path }, ctx) => traced(ctx, 'read_file', async () => (await pause(), readFile(at(path), { encoding: 'utf8', signal: ctx.signal }))),
    }),
    defineTool({
      name: 'search', description: 'Find lines containing a pattern', input: z.object({ pattern: z.string(), path: z.string() }),
      mode: 'parallel',
      execute: ({ pattern, path }, ctx) =>
        traced(ctx, 'search', async () => {
          const hits: string[] = [];
          for (const file of await readdir(at(path), { recursive: true })) {
            const text = await readFile(at(join(path, file)), 'utf8').catch(() => '');
            text.split('\n').forEach((line, i) => line.includes(pattern) && hits.push(`${relative(root, at(join(path, file)))}:${i + 1}: ${line}`));
          }
          return hits.join('\n');
        }),
    }),
    defineTool({
      name: 'write_file', description: 'Write a file', input: z.object({ path: z.string(), content: z.string() }), mode: 'exclusive',
      execute: ({ path, content }, ctx) =>
        traced(ctx, 'write_file', async () => (await writeFile(at(path), content, { signal: ctx.signal }), `wrote ${content.length} characters`)),
    }),
  ];

  const approve: Approver = async ({ tool, args, reasons }, signal) => {
    const question = `approve ${tool.name} ${JSON.stringify(args)} (${reasons.join('; ')})?`;
    if (yes || !process.stdin.isTTY) {
      log(`  ? ${question} → allowed once (${yes ? '--yes' : 'not interactive'})`);
      return 'allowed-once';
    }
    const prompt = createInterface({ input: process.stdin, output: process.stdout });
    try {
      const answer = await prompt.question(`  ? ${question} [y/N] `, { signal });
      return /^y(es)?$/i.test(answer.trim()) ? 'allowed-once' : 'rejected';
    } finally {
      prompt.close();
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
