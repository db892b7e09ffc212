import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresAvailable, postgresMissing, requirePostgres, startPostgres, type TestPostgres } from '../../support/postgres.js';
import { skippedBecause } from '../../support/skip.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
requirePostgres();
let server: TestPostgres | undefined;
beforeAll(async () => {
  if (postgresAvailable()) server = await startPostgres();
});
afterAll(() => server?.stop());

// The snippet of the PostgreSQL journal for the README/docs is the #region of this file: it runs as a user runs it.
it.skipIf(!postgresAvailable())(skippedBecause('examples/postgres.ts runs: the turn resumed from a journal opened anew replays, and the e-mail went once', postgresMissing()), async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/postgres.ts'], { cwd: root, encoding: 'utf8', env: { ...process.env, DATABASE_URL: server!.url } });
  expect(stdout.trim()).toBe('postgres example: ok');
});
