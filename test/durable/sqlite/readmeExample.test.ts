import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));

// The README's snippet of "The SQLite journal" is the #region of this file: it runs as a user runs it.
it('examples/readme/sqlite.ts runs: the turn resumed from a journal opened anew replays, and the e-mail went once', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/readme/sqlite.ts'], { cwd: root, encoding: 'utf8' });
  expect(stdout.trim()).toBe('sqlite example: ok');
});
