import { describe, expect, it } from 'vitest';
import { countMarked, MARK } from './leftovers.js';
import { POSTGRES_MISSING, postgresAvailable, requirePostgres, startPostgres } from './postgres.js';

describe('the PostgreSQL tests have a real PostgreSQL', () => {
  it.skipIf(!postgresAvailable())(`starts (or is given) one that answers (${postgresAvailable() ? 'PostgreSQL found' : POSTGRES_MISSING})`, async () => {
    const { default: pg } = await import('pg');
    const query = async (url: string) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one;
      } finally {
        await client.end();
      }
    };
    const shared = await startPostgres();
    expect(await query(shared.url)).toBe(1);
    await shared.stop();

    const own = await startPostgres({ own: true });
    try {
      expect(own.url).toBe(`postgres://app@127.0.0.1:${own.port}/postgres`);
      // The server carries the file's mark, so leftovers.ts would kill it if this test could not stop it.
      expect(countMarked(process.env[MARK] ?? '')).toBeGreaterThan(0);
      const client = new pg.Client({ connectionString: own.url });
      await client.connect();
      await client.query('CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)');
      await client.end();
      await own.restart(100);
      const after = new pg.Client({ connectionString: own.url });
      await after.connect();
      expect((await after.query<{ n: number }>('SELECT n FROM kept')).rows).toEqual([{ n: 7 }]);
      await after.end();
    } finally {
      await own.stop();
    }
    expect(countMarked(process.env[MARK] ?? '')).toBe(0);
  });

  it('under CI=true a missing PostgreSQL fails rather than skips', () => {
    requirePostgres();
    expect(postgresAvailable() || process.env['CI'] !== 'true').toBe(true);
  });
});
