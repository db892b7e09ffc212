import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.js';

/**
 * The README's Testing section shows examples/testing/tools.ts and its tests,
 * examples/testing/tools.property.test.ts, as a user writes them: this suite must collect those tests
 * (they import the package by name, which vitest resolves through tsconfig.json's `paths`; were that
 * broken, they would fail to load).
 */
describe('examples/testing', () => {
  it('is collected by the suite', () => {
    expect(config.test?.include).toContain('examples/testing/**/*.test.ts');
    expect(config.resolve?.tsconfigPaths).toBe(true);
    for (const file of ['tools.ts', 'tools.property.test.ts']) expect(existsSync(join(process.cwd(), 'examples/testing', file)), file).toBe(true);
  });
});
