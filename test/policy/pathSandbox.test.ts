import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, DEFAULT_PATH_KEYS, defineTool, type PrePolicy, type ToolResult } from '../../src/index.js';
import { pathSandbox } from '../../src/node/index.js';
import { deferred } from '../support/deferred.js';
import { tick } from '../faults/helpers.js';

// A workspace with links inside it pointing out, and a secret outside it.
const base = realpathSync(mkdtempSync(join(tmpdir(), 'ts-sandbox-')));
const root = join(base, 'root');
const outside = join(base, 'outside');
mkdirSync(join(root, 'sub'), { recursive: true });
mkdirSync(outside);
writeFileSync(join(root, 'ok.txt'), 'ok');
writeFileSync(join(root, 'sub', 'inner.txt'), 'inner');
writeFileSync(join(outside, 'secret.txt'), 'secret');
symlinkSync(join(outside, 'secret.txt'), join(root, 'file-link')); // absolute, to a file
symlinkSync(outside, join(root, 'dir-link')); // to a directory
symlinkSync('../outside/secret.txt', join(root, 'relative-link')); // relative
symlinkSync(join(outside, 'new.txt'), join(root, 'dangling')); // writing through it creates outside/new.txt
symlinkSync(join(root, 'sub'), join(root, 'inner-link')); // inside → inside: fine
symlinkSync(join(root, 'loop'), join(root, 'loop'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const seen: unknown[] = [];
const loose = (name: string) =>
  defineTool({ name, description: name, input: z.looseObject({}), mode: 'parallel', execute: (args) => (seen.push(args), 'ran') });
const run = async (name: string, args: unknown, pre: PrePolicy[] = [pathSandbox({ root })]): Promise<ToolResult> => {
  seen.length = 0;
  const tool = loose(name);
  const [result] = await createPipeline({ tools: [tool], pre }).run([{ id: '1', name, args }]);
  return result!;
};
const reason = (result: ToolResult) => (result.error?.code === 'denied' ? result.error.reasons[0] : result.error?.message);

describe('pathSandbox follows every path in the arguments', () => {
  it('checks paths nested in objects and arrays, and hands them over absolute', async () => {
    const denied = await run('write_many', { files: [{ path: 'ok.txt', content: 'a' }, { path: '../outside/x', content: 'b' }] });
    expect(denied.status).toBe('denied');
    expect(reason(denied)).toBe(`"files[1].path" ("../outside/x") is outside ${root}`);
    expect(seen).toEqual([]);
    const ran = await run('write_many', { files: [{ path: 'ok.txt', content: 'a' }], meta: { dir: 'sub' } });
    expect(ran.status).toBe('ok');
    expect(seen).toEqual([{ files: [{ path: join(root, 'ok.txt'), content: 'a' }], meta: { dir: join(root, 'sub') } }]);
  });

  it('knows move_file source/destination, notebook_path, and key names in any case', async () => {
    for (const args of [
      { source: 'ok.txt', destination: '/etc/cron.d/x' },
      { notebook_path: '../../x.ipynb' },
      { Path: '/etc/passwd' },
      { FILE_PATH: '/etc/passwd' },
      { targetFile: '../x' },
      { nested: { OldDir: '/etc' } },
    ]) {
      const result = await run('tool', args);
      expect(result.status, JSON.stringify(args)).toBe('denied');
    }
    expect(seen).toEqual([]);
    const moved = await run('move_file', { source: 'ok.txt', destination: 'sub/ok.txt' });
    expect(moved.args).toEqual({ source: join(root, 'ok.txt'), destination: join(root, 'sub', 'ok.txt') });
    // Words that merely end like a path key are not paths: "profile" is not a "file".
    expect((await run('tool', { profile: '../admin', sourceCode: '/x' })).status).toBe('ok');
  });

  it('extends: the defaults are exported to spread into keys', async () => {
    const result = await run('deploy', { target: '/etc' }, [pathSandbox({ root, keys: [...DEFAULT_PATH_KEYS, 'target'] })]);
    expect(result.status).toBe('denied');
  });

  it('a schema default reaches the body absolute, not relative to the process', async () => {
    const list = defineTool({ name: 'list_dir', description: 'l', input: z.object({ dir: z.string().default('.') }), execute: (args) => (seen.push(args), 'listed') });
    seen.length = 0;
    const [result] = await createPipeline({ tools: [list], pre: [pathSandbox({ root })] }).run([{ id: '1', name: 'list_dir', args: {} }]);
    expect(result!.status).toBe('ok');
    expect(seen).toEqual([{ dir: root }]);
  });

  it('a transform that makes a path relative again is denied, not handed over', async () => {
    const rel = defineTool({
      name: 'rel',
      description: 'r',
      input: z.object({ path: z.string().transform((p) => p.split('/').pop()!) }),
      execute: () => 'ran',
    });
    const [result] = await createPipeline({ tools: [rel], pre: [pathSandbox({ root })] }).run([{ id: '1', name: 'rel', args: { path: 'sub/inner.txt' } }]);
    expect(result!.status).toBe('denied');
    expect(reason(result!)).toMatch(/is relative, and the tool's schema keeps it so/);
  });

  it('keeps a trailing slash', async () => {
    expect((await run('list', { dir: 'sub/' })).args).toEqual({ dir: `${join(root, 'sub')}/` });
  });

  it('denies symbolic links inside the root that lead out: file, directory, relative, dangling, inside an array', async () => {
    for (const args of [
      { path: 'file-link' },
      { path: 'dir-link/secret.txt' },
      { path: 'relative-link' },
      { path: 'dangling' },
      { paths: ['ok.txt', 'dir-link/secret.txt'] },
    ]) {
      const result = await run('read', args);
      expect(result.status, JSON.stringify(args)).toBe('denied');
      expect(reason(result)).toMatch(/leads outside .* through a symbolic link/);
    }
    expect(seen).toEqual([]);
    // A link that stays inside is fine, and the path is handed over as written (made absolute).
    const inner = await run('read', { path: 'inner-link/inner.txt' });
    expect(inner.status).toBe('ok');
    expect(inner.args).toEqual({ path: join(root, 'inner-link', 'inner.txt') });
  });

  it('denies a path it cannot resolve (a link loop), failing closed', async () => {
    const result = await run('read', { path: 'loop/x' });
    expect(result.status).toBe('denied');
    expect(reason(result)).toMatch(/cannot be resolved/);
  });

  it('checks again right before the body starts: a file swapped for a link while approval was pending is not read', async () => {
    const swapped = join(root, 'swapped.txt');
    writeFileSync(swapped, 'harmless');
    const asked = deferred();
    const answer = deferred();
    const body = vi.fn(() => 'read it');
    const read = defineTool({ name: 'read_file', description: 'r', input: z.object({ path: z.string() }), execute: body });
    const results = createPipeline({
      tools: [read],
      pre: [askTools(['read_file']), pathSandbox({ root })],
      approve: async () => {
        asked.resolve();
        await answer.promise;
        return 'allowed-once';
      },
    }).run([{ id: '1', name: 'read_file', args: { path: 'swapped.txt' } }]);
    await asked.promise;
    unlinkSync(swapped);
    symlinkSync(join(outside, 'secret.txt'), swapped);
    answer.resolve();
    const [result] = await results;
    expect(body).not.toHaveBeenCalled();
    expect(result!.status).toBe('denied');
    expect(result!.error).toMatchObject({ code: 'denied', stage: 'start' });
    expect(reason(result!)).toMatch(/through a symbolic link/);
    await tick();
  });
});

it('applies to its tools in any case: the tools option tightens, so Read_File is sandboxed by read_*', async () => {
  const tool = defineTool({ name: 'Read_File', description: 'r', input: z.looseObject({}), execute: () => 'ran' });
  const [result] = await createPipeline({ tools: [tool], pre: [pathSandbox({ root, tools: ['read_*'] })] }).run([
    { id: '1', name: 'Read_File', args: { path: '/etc/passwd' } },
  ]);
  expect(result!.status).toBe('denied');
});
