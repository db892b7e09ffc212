import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const node = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' });

describe('the published package', () => {
  it('builds, and its exports map serves ESM and CJS with the same named exports', () => {
    execFileSync('npx', ['tsup', '--silent'], { cwd: root, stdio: 'pipe' });
    const esm = node(['--input-type=module', '-e', "import * as t from 'toolstream'; console.log(Object.keys(t).sort().join())"]);
    const cjs = node(['-e', "console.log(Object.keys(require('toolstream')).sort().join())"]);
    expect(esm.trim()).toBe(cjs.trim());
    expect(esm.trim().split(',')).toEqual(expect.arrayContaining(['createPipeline', 'defineTool', 'executeTools', 'ConfigError']));
    const run = node([
      '--input-type=module',
      '-e',
      `import { createPipeline, defineTool } from 'toolstream'; import { z } from 'zod';
       const t = defineTool({ name: 'x', description: 'x', input: z.object({}), execute: () => 'built' });
       const [r] = await createPipeline({ tools: [t] }).run([{ id: '1', name: 'x', args: {} }]);
       console.log(r.content);`,
    ]);
    expect(run.trim()).toBe('built');
  }, 60_000);
});
