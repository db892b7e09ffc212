import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The API reference (`npm run docs`, TypeDoc, `typedoc.json`) covers every entry point of the package
 * and builds without a warning: every export documented, every `{@link}` resolved, nothing the exports
 * mention left unexported (`validation` and `treatWarningsAsErrors` in `typedoc.json`). The check
 * converts and validates without writing the HTML (`--emit none`): about 10 s.
 */
const root = process.cwd();
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const manifest = JSON.parse(read('package.json')) as { exports: Record<string, unknown> };
const typedoc = JSON.parse(read('typedoc.json')) as { entryPoints: string[]; out: string };

describe('the API reference', () => {
  it('has an entry point for every subpath the package exports', () => {
    // tsup.config.ts names each built file's source: `anthropic: 'src/adapters/anthropic/index.ts'`.
    const entries = new Map([...read('tsup.config.ts').matchAll(/^\s*'?([\w-]+)'?: '(src\/[\w/.-]+\.ts)',$/gm)].map((m) => [m[1]!, m[2]!]));
    const subpaths = Object.keys(manifest.exports).filter((subpath) => subpath !== './package.json');
    expect(subpaths.length).toBeGreaterThanOrEqual(9);
    const sources = subpaths.map((subpath) => {
      const source = entries.get(subpath === '.' ? 'index' : subpath.slice(2));
      expect(source, `tsup.config.ts builds no entry for ${subpath}`).toBeDefined();
      return source!;
    });
    expect([...typedoc.entryPoints].sort()).toEqual(sources.sort());
  });

  it('is built outside the tarball and kept out of git', () => {
    expect(typedoc.out).toBe('.api');
    expect(read('.gitignore').split('\n')).toContain('.api/');
  });

  it('builds with no undocumented export, broken link or unexported type (TypeDoc, warnings as errors)', async () => {
    // typedoc's `exports` hide its bin from require.resolve: find it beside its package.json.
    const cli = join(dirname(createRequire(import.meta.url).resolve('typedoc/package.json')), 'bin', 'typedoc');
    const output = await promisify(execFile)(process.execPath, [cli, '--emit', 'none'], { cwd: root, timeout: 170_000, env: { ...process.env, NO_COLOR: '1' } })
      .then(({ stdout, stderr }) => ({ code: 0, text: stdout + stderr }))
      .catch((error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, text: `${error.stdout ?? ''}${error.stderr ?? ''}` }));
    // Each warning names the export or the link; the last line counts them.
    const problems = output.text.split('\n').filter((line) => /\[(warning|error)\]/.test(line));
    expect(problems).toEqual([]);
    expect(output.code).toBe(0);
  }, 180_000);
});
