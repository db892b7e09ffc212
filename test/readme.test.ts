import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * Every TypeScript or JavaScript block of the README and of the pages in `docs/` is taken from a file
 * of the repository: its first line, `// <path>`, names the file, and the rest of its lines appear in
 * that file in the same order (indentation aside), so the docs show code that exists. A block may be an
 * excerpt; the file it names defines everything the excerpt uses, since `tsc --noEmit` type-checks the
 * files (the tsconfig includes `examples`). This test runs those under `examples/readme/` — each checks
 * its own outcome with `node:assert` — and checks that a test runs each of the others (the agent loops
 * run against a replay server, the quick start from the packed package).
 */
const root = process.cwd();
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((file) => file.endsWith('.md')).map((file) => `docs/${file}`)];
const CODE = new Set(['ts', 'typescript', 'js', 'javascript', 'tsx', 'mjs', 'cjs']);

interface Block {
  /** Where the block's code starts: `docs/fleet.md:12`. */
  readonly at: string;
  readonly file: string | undefined;
  readonly body: readonly string[];
}

function codeBlocks(page: string): Block[] {
  const lines = readFileSync(join(root, page), 'utf8').split('\n');
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\w*)\s*$/.exec(lines[i]!); // also a block indented in a list
    if (open === null) continue;
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
    if (CODE.has(open[1]!)) {
      const [first = '', ...body] = lines.slice(i + 1, end);
      // `// examples/x.ts`, or `// examples/x.ts — what it is` when the file's own first line says more.
      const file = /^\/\/ ((?:examples|src|bench|test)\/[\w./-]+)(?: — .*)?$/.exec(first.trim())?.[1];
      found.push({ at: `${page}:${i + 2}`, file, body });
    }
    i = end;
  }
  return found;
}

const significant = (lines: readonly string[]) => lines.map((line) => line.trim()).filter((line) => line !== '');
const blocks = pages.flatMap(codeBlocks);
const files = [...new Set(blocks.flatMap((block) => (block.file === undefined ? [] : [block.file])))];
const runHere = files.filter((file) => file.startsWith('examples/readme/') && file.endsWith('.ts'));
const tsx = createRequire(import.meta.url).resolve('tsx/cli');
const exec = promisify(execFile);

describe('the README and docs/', () => {
  it('has pages in docs/ beside the README, with code blocks', () => {
    expect(pages.length).toBeGreaterThan(10);
    expect(new Set(blocks.map((block) => block.at.split(':')[0])).size).toBeGreaterThan(10);
  });

  it('has no code block that does not name the file it comes from', () => {
    const loose = blocks.filter((block) => block.file === undefined).map((block) => `${block.at}: ${block.body[0] ?? ''}`);
    expect(loose).toEqual([]);
    for (const file of files) expect(existsSync(join(root, file)), file).toBe(true);
  });

  it('shows only lines its files hold, in their order', () => {
    for (const block of blocks.filter((b) => b.file !== undefined)) {
      const source = significant(readFileSync(join(root, block.file!), 'utf8').split('\n'));
      let at = 0;
      for (const line of significant(block.body)) {
        const found = source.indexOf(line, at);
        expect(found, `${block.at}: ${block.file} has no line "${line}" after its line ${at}`).toBeGreaterThanOrEqual(0);
        at = found + 1;
      }
    }
  });

  it('names only files that a test runs', () => {
    const tests = readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('readme.test.ts'))
      .map((file) => readFileSync(join(root, 'test', file), 'utf8'))
      .join('\n');
    // A file runs when a test names it, or when a file that runs imports it (`from '../workspace.js'`).
    const named = (text: string, file: string) => {
      const name = file.split('/').pop()!;
      return text.includes(name) || text.includes(`/${name.replace(/\.ts$/, '.js')}'`);
    };
    const runs = [...runHere, ...files.filter((file) => named(tests, file))];
    const runners = [tests, ...runs.map((file) => readFileSync(join(root, file), 'utf8'))].join('\n');
    const suite = (file: string) => /^(test|examples\/testing)\/.+\.test\.ts$/.test(file); // vitest runs it itself
    for (const file of files.filter((file) => !runHere.includes(file))) {
      expect(named(runners, file) || suite(file), `${file} is shown in the docs but nothing runs it`).toBe(true);
    }
  });

  it.each(runHere)('runs %s', async (file) => {
    // It exits 0 only if its own assertions held.
    await exec(process.execPath, [tsx, resolve(root, file)], { cwd: root, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } });
  });
});
