import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = async (script: string, ...args: string[]) =>
  (await promisify(execFile)(process.execPath, ['--import', 'tsx', script, ...args], { cwd: root, encoding: 'utf8' })).stdout;

// The README's main command and the PTC example, as a user runs them (offline, non-interactive).
describe('the examples', () => {
  it('npm start: both replayed responses run through the pipeline, the program included', async () => {
    const out = await run('examples/demo.ts', '--yes');
    expect(out).toContain('7 calls: 6 ok, 1 denied');
    // Progress from terminalProgress: plain lines in a pipe, one per start and one per end of each call.
    expect(out).toMatch(/^▸ write_file toolu_demo_04 running$/m);
    expect(out).toMatch(/^✓ write_file toolu_demo_04 ok in \d+ ms$/m);
    expect(out).toMatch(/^✗ read_file toolu_demo_05 denied in \d+ ms$/m);
    expect(out).toContain('"tool_use_id": "toolu_demo_07"');
    expect(out).toMatch(/\{\\"count\\":5,\\"todos\\":\[/);
    expect(out).toContain("The program's 6 tool calls");
    expect(out).toMatch(/toolu_demo_07#6 +read_file +denied +\{"path":"..\/..\/etc\/passwd"\}/);
    // The picture of the schedule, written where it says: a bar or mark for each of the 7 calls.
    const file = /The schedule as a picture \(open it in a browser\): (.+\.svg)$/m.exec(out)?.[1];
    expect(file).toBeDefined();
    expect(readFileSync(file!, 'utf8').match(/data-part="(body|outcome)"/g)).toHaveLength(7);
  });

  it('npm run example:ptc: a program reads the sources; a broken one gets its line and column', async () => {
    const out = await run('examples/ptc.ts');
    expect(out).toContain('the escape attempt ended as: denied');
    expect(out).toContain('TypeError: cannot read property \'length\' of undefined\n    at line 2, column 28');
  });
});
