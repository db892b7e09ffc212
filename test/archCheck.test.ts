import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * scripts/archCheck.mjs, the check `.ci/run` runs: each verdict on a small tree written here (with the
 * script's real ROOMS and ALLOWED tables), then the repository itself against its baseline.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const script = path.join(root, 'scripts', 'archCheck.mjs');
const work = mkdtempSync(path.join(tmpdir(), 'toolstream-arch-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Baseline { readonly cycles: readonly (readonly string[])[]; readonly imports: readonly string[]; readonly long: readonly string[] }

let trees = 0;
/** A checkout holding `files` under src/ and, when given, scripts/arch-baseline.json. */
function tree(files: Readonly<Record<string, string>>, baseline?: Baseline): string {
  const dir = path.join(work, `tree-${++trees}`);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, 'src', file)), { recursive: true });
    writeFileSync(path.join(dir, 'src', file), text);
  }
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  if (baseline) {
    mkdirSync(path.join(dir, 'scripts'));
    writeFileSync(path.join(dir, 'scripts', 'arch-baseline.json'), JSON.stringify(baseline));
  }
  return dir;
}

function check(dir: string | undefined, ...flags: string[]): { readonly code: number | null; readonly out: string } {
  const result = spawnSync(process.execPath, [script, ...(dir === undefined ? [] : [dir]), ...flags], { encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, out: result.stdout + result.stderr };
}

const lines = (count: number): string => 'export const x = 1;\n'.repeat(count);
const none: Baseline = { cycles: [], imports: [], long: [] };

// Imports that run down only.
const clean = {
  'types/call.ts': 'export interface Call { readonly id: string }\n',
  'util/fifo.ts': "import type { Call } from '../types/call.js';\nexport const first = (calls: Call[]) => calls[0];\n",
  'engine/pool.ts': "import { first } from '../util/fifo.js';\nimport { of } from 'rxjs';\nexport const pool = () => of(first([]));\n",
  'durable/journal.ts': "import { pool } from '../engine/pool.js';\nexport const journal = pool;\n",
  'bullmq/remote.ts': "import type { journal } from '../durable/journal.js';\nexport type Remote = typeof journal;\n",
  'pipeline/createPipeline.ts': "import { journal } from '../durable/journal.js';\nexport const createPipeline = journal;\n",
  'index.ts': "export { createPipeline } from './pipeline/createPipeline.js';\n",
};

describe('the architecture check', () => {
  it('passes a tree whose imports run down only, with no baseline (strict)', () => {
    const { code, out } = check(tree(clean));
    expect(out).toContain('arch: ok');
    expect(code).toBe(0);
  });

  // Every form of a type-only import closes a cycle as a value import would.
  it.each([
    ['import type', "import type { A } from './a.js';\nexport type B = A;\n"],
    ['import { type }', "import { type A } from './a.js';\nexport type B = A;\n"],
    ['export type … from', "export type { A } from './a.js';\n"],
    ['import("…") type', "export type B = import('./a.js').A;\n"],
  ])('fails a cycle closed by %s', (_form, b) => {
    const { code, out } = check(tree({ 'engine/a.ts': "import { b } from './b.js';\nexport type A = string;\nexport const a = b;\n", 'engine/b.ts': `${b}export const b = 1;\n` }));
    expect(out).toContain('cycles: ["engine/a.ts","engine/b.ts"]');
    expect(out).toContain('engine/a.ts:1 → engine/b.ts:1 → engine/a.ts');
    expect(out).toContain('arch: FAIL 1 new violations');
    expect(code).toBe(1);
  });

  it('fails an engine file importing a layer, if only a type, whatever its room', () => {
    const { code, out } = check(tree({
      ...clean,
      'engine/slot.ts': "import type { journal } from '../durable/journal.js';\nexport type J = typeof journal;\n",
      'stream/answerable.ts': "import { journal } from '../durable/journal.js';\nexport const answerable = journal;\n",
    }));
    expect(out).toMatch(/imports: "engine\/slot\.ts -> durable\/journal\.ts" +\(line 1, type-only: engine file → layer; engine → durable/);
    expect(out).toMatch(/imports: "stream\/answerable\.ts -> durable\/journal\.ts" +\(line 1: engine file → layer/);
    expect(out).toContain('arch: FAIL 2 new violations');
    expect(code).toBe(1);
  });

  it('fails an import up a room or sideways between layers, and allows the listed exceptions', () => {
    const { code, out } = check(tree({
      ...clean,
      'util/describe.ts': "import type { pool } from '../engine/pool.js';\nexport type P = typeof pool;\n",
      'mcp/tools.ts': "import { journal } from '../durable/journal.js';\nexport const tools = journal;\n",
      'ptc/run.ts': "import { journal } from '../durable/journal.js';\nexport const run = journal;\n",
    }));
    expect(out).toContain('imports: "util/describe.ts -> engine/pool.ts"  (line 1, type-only: util → engine; util may import types)');
    expect(out).toContain('imports: "mcp/tools.ts -> durable/journal.ts"  (line 1: mcp → durable;');
    expect(out).not.toContain('ptc/run.ts'); // ptc → durable is one of the listed exceptions, as bullmq → durable
    expect(out).toContain('arch: FAIL 2 new violations');
    expect(code).toBe(1);
  });

  it('lets toolstream/testing import the rooms below the engine, and no layer or the engine', () => {
    const { code, out } = check(tree({
      ...clean,
      'tool/rateLimiter.ts': "import type { Call } from '../types/call.js';\nexport const reset = (c: Call) => c;\n",
      'adapters/anthropic.ts': "import { pool } from '../engine/pool.js';\nexport const adapt = pool;\n",
      'testing/index.ts': "export { reset } from '../tool/rateLimiter.js';\nexport { first } from '../util/fifo.js';\n",
      'testing/streams.ts': "import { adapt } from '../adapters/anthropic.js';\nimport { pool } from '../engine/pool.js';\nexport const s = [adapt, pool];\n",
    }));
    expect(out).not.toContain('testing/index.ts');
    expect(out).toContain('imports: "testing/streams.ts -> adapters/anthropic.ts"  (line 1: engine file → layer; testing → adapters;');
    expect(out).toContain('imports: "testing/streams.ts -> engine/pool.ts"  (line 2: testing → engine; testing may import types, util, stream, tool)');
    expect(code).toBe(1);
  });

  it('fails a file over 400 lines, not one of 400', () => {
    const { code, out } = check(tree({ 'engine/pool.ts': lines(401), 'engine/attempts.ts': lines(400), 'util/fifo.ts': lines(399) + 'export const y = 2;' }));
    expect(out).toContain('long: "engine/pool.ts" (401 lines)');
    expect(out).not.toContain('attempts.ts');
    expect(out).not.toContain('fifo.ts');
    expect(code).toBe(1);
  });

  it('fails a file in no room, whatever the baseline says', () => {
    const { code, out } = check(tree({ ...clean, 'misc/helper.ts': 'export {};\n', 'internal/newHelper.ts': 'export {};\n' }, none));
    expect(out).toContain('no room: src/internal/newHelper.ts — add it to ROOMS in scripts/archCheck.mjs');
    expect(out).toContain('no room: src/misc/helper.ts');
    expect(out).toContain('arch: FAIL 2 files in no room');
    expect(code).toBe(1);
  });

  const violating = {
    ...clean,
    'engine/slot.ts': "import type { journal } from '../durable/journal.js';\nexport type J = typeof journal;\n",
    'engine/a.ts': "import type { B } from './b.js';\nexport type A = B;\n",
    'engine/b.ts': "import type { A } from './a.js';\nexport type B = A | 1;\n",
    'engine/pool.ts': lines(401),
  };
  const known: Baseline = { cycles: [['engine/a.ts', 'engine/b.ts']], imports: ['engine/slot.ts -> durable/journal.ts'], long: ['engine/pool.ts'] };

  it('tolerates the violations its baseline lists', () => {
    const { code, out } = check(tree(violating, known));
    expect(out).toContain('arch: ok (3 known violations left in scripts/arch-baseline.json)');
    expect(code).toBe(0);
  });

  it('fails on a baseline entry that no longer occurs, naming it', () => {
    const stale: Baseline = { ...known, imports: [...known.imports, 'stages/guard.ts -> durable/types.ts'], long: [...known.long, 'internal/callPool.ts'] };
    const { code, out } = check(tree(violating, stale));
    expect(out).toContain('fixed, so remove from scripts/arch-baseline.json (or run node scripts/archCheck.mjs --update-baseline):\n'
      + '  imports: "stages/guard.ts -> durable/types.ts"\n  long: "internal/callPool.ts"\n');
    expect(out).toContain('arch: FAIL 2 stale baseline entries');
    expect(code).toBe(1);
  });

  it('fails on a violation its baseline does not list, naming it', () => {
    const { code, out } = check(tree(violating, { ...known, cycles: [] }));
    expect(out).toContain('new violations (not in scripts/arch-baseline.json); fix them, or add them there if you must:\n'
      + '  cycles: ["engine/a.ts","engine/b.ts"]\n');
    expect(out).toContain('arch: FAIL 1 new violations');
    expect(code).toBe(1);
  });

  it('--update-baseline rewrites the baseline to exactly the violations found; the check then passes', () => {
    const dir = tree(violating, { cycles: [], imports: ['stages/guard.ts -> durable/types.ts'], long: ['engine/pool.ts'] });
    const updated = check(dir, '--update-baseline');
    expect(updated.out).toContain('scripts/arch-baseline.json: removed (fixed)\n  imports: "stages/guard.ts -> durable/types.ts"\n');
    expect(updated.out).toContain('scripts/arch-baseline.json: ADDED (new violations; only on purpose)\n  cycles: ["engine/a.ts","engine/b.ts"]');
    expect(updated.code).toBe(0);
    const written = JSON.parse(readFileSync(path.join(dir, 'scripts', 'arch-baseline.json'), 'utf8')) as Baseline;
    expect({ cycles: written.cycles, imports: written.imports, long: written.long }).toEqual(known);
    expect(check(dir).code).toBe(0);
  });

  it('passes on this repository against its baseline', () => {
    const { code, out } = check(undefined);
    expect(out).toMatch(/arch: ok/);
    expect(code).toBe(0);
  });
});
