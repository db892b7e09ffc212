import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

// The docs' "Events and traces" code is this example's: run as a user runs it.
describe('examples/tracing.ts', () => {
  it('prints the trace: both calls under the agent span, the body\'s span under its call, the denied call with its error.type', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/tracing.ts'], { cwd: root, encoding: 'utf8' });
    expect(stdout).toBe(
      [
        'invoke_agent weather',
        '  execute_tool get_weather  call_1 ok',
        '    weather api',
        '  execute_tool delete_file  call_2 denied error.type=denied',
        '',
      ].join('\n'),
    );
  }, 60_000);
});
