import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createPipeline, defineTool, runCodeTool, type ProgramOutput, type ToolResult } from '../../src/index.js';
import { pathSandbox } from '../../src/node/index.js';
import { createQuickJSRuntime } from '../../src/ptc/quickjs/index.js';
import { workspacePaths } from '../../src/ptc/workspacePaths.js';

const runtime = createQuickJSRuntime({ timeoutMs: 20_000, poolSize: 1 });
let base: string;
/** The workspace, as the host names it: through a symbolic link, so its real location differs. */
let root: string;
let real: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'toolstream-workspace-'));
  real = await realpath(await mkdtemp(path.join(base, 'real-')));
  await mkdir(path.join(real, 'notes'));
  await writeFile(path.join(real, 'notes', 'a.md'), 'alpha\n');
  await writeFile(path.join(real, 'notes', 'b.md'), 'beta\n');
  root = path.join(base, 'project');
  await symlink(real, root);
}, 60_000);
afterAll(async () => {
  await runtime.close();
  await rm(base, { recursive: true, force: true });
});

/** Tools as a host writes them: they take and return absolute paths (pathSandbox makes the model's absolute). */
const tools = () => [
  defineTool({
    name: 'list_dir',
    description: 'List a directory',
    input: z.object({ path: z.string() }),
    mode: 'parallel',
    execute: async ({ path: dir }) => (await readdir(dir)).sort().map((name) => path.join(dir, name)),
  }),
  defineTool({
    name: 'read_file',
    description: 'Read a file',
    input: z.object({ path: z.string() }),
    mode: 'parallel',
    execute: ({ path: file }) => readFile(file, 'utf8'),
  }),
  defineTool({
    name: 'where',
    description: 'Where the workspace really is',
    input: z.object({}),
    mode: 'parallel',
    execute: async () => ({ root, real: await realpath(root), sibling: `${root}2/x` }),
  }),
];

const run = async (program: string, { relative = true } = {}): Promise<ToolResult> => {
  const pipeline = createPipeline({
    tools: [...tools(), runCodeTool({ runtime, ...(relative ? { workspace: root } : {}) })],
    pre: [pathSandbox({ root })],
  });
  const [result] = await pipeline.run([{ id: 'p', name: 'run_code', args: { program } }]);
  return result!;
};

describe('runCodeTool({ workspace }): the model sees paths relative to the workspace', () => {
  it('a listing, the files it names and what the program prints are relative; the host log keeps the absolute paths', async () => {
    const result = await run(`
      const files = await tools.list_dir({ path: 'notes' });
      console.log('listed', files.join(', '));
      const texts = await Promise.all(files.map((path) => tools.read_file({ path })));
      return { files, texts, here: await tools.list_dir({ path: '.' }) };`);
    expect(result.status).toBe('ok');
    expect(result.content).toBe('{"files":["notes/a.md","notes/b.md"],"texts":["alpha\\n","beta\\n"],"here":["notes"]}\n\n[console output]\nlisted notes/a.md, notes/b.md');
    const { subCalls } = result.value as ProgramOutput;
    expect(subCalls[1]!.args).toEqual({ path: path.join(root, 'notes', 'a.md') });
  }, 60_000);

  it("a tool's error, a denial, and a program that fails with them show no host path", async () => {
    const caught = await run(`
      const missing = await tools.read_file({ path: 'notes/c.md' }).catch((e) => e.message);
      const escape = await tools.read_file({ path: '../../etc/passwd' }).catch((e) => e.code + ': ' + e.message);
      return { missing, escape, where: await tools.where({}) };`);
    expect(caught.status).toBe('ok');
    const { missing, escape, where } = JSON.parse(caught.content) as { missing: string; escape: string; where: Record<string, string> };
    expect(missing).toContain("ENOENT: no such file or directory, open 'notes/c.md'");
    expect(escape).toBe('denied: Denied by policy "pathSandbox(.)": "path" ("../../etc/passwd") is outside ..'); // the workspace, and the full stop
    // The real location too (a symbolic link led to it); a sibling that only starts alike is not the workspace.
    expect(where).toEqual({ root: '.', real: '.', sibling: `${root}2/x` });

    const failed = await run(`const text = await tools.read_file({ path: 'notes/c.md' });\nreturn text;`);
    expect(failed.status).toBe('error');
    expect(failed.content).toContain("ENOENT: no such file or directory, open 'notes/c.md'");
    expect(failed.content).not.toContain(real);
    expect(failed.content).not.toContain(base);
  }, 60_000);

  it('says so in its description; without a workspace the paths are shown as the tools return them', async () => {
    const pipeline = createPipeline({ tools: [...tools(), runCodeTool({ runtime, workspace: root })] });
    expect(pipeline.available.find((tool) => tool.name === 'run_code')!.description).toContain('Paths are relative to the workspace.');
    const plain = await run(`return await tools.list_dir({ path: 'notes' });`, { relative: false });
    expect(plain.content).toBe(JSON.stringify([path.join(root, 'notes', 'a.md'), path.join(root, 'notes', 'b.md')]));
    expect(() => runCodeTool({ runtime, workspace: '' })).toThrow(ConfigError);
  }, 60_000);

  it('the rewrite: a path under the workspace becomes relative, the workspace itself ".", anything else stays', () => {
    const workspace = '/srv/ws';
    const show = workspacePaths(workspace);
    const segment = fc.stringMatching(/^[\w.-]{1,8}$/).filter((s) => s !== '.' && s !== '..');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.string(), (segments, other) => {
        const relative = segments.join('/');
        expect(show(`at ${workspace}/${relative}:3`)).toBe(`at ${relative}:3`);
        expect(show({ [`${workspace}/${relative}`]: [workspace] })).toEqual({ [relative]: ['.'] });
        expect(show(`${workspace}${segments[0]}`)).toBe(`${workspace}${segments[0]}`); // another directory (/srv/ws2, /srv/ws.old)
        if (!other.includes(workspace)) expect(show(other)).toBe(other);
      }),
    );
    expect(show(`outside ${workspace}.`)).toBe('outside ..'); // a full stop ends the sentence, not the name
    expect(workspacePaths(undefined)(`${workspace}/a`)).toBe(`${workspace}/a`);
  });
});
