import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Examples import the package by name, as a user does: tsconfig.json's `paths` map the names to src/
  // (as they do for tsc and tsx).
  resolve: { tsconfigPaths: true },
  test: {
    // examples/testing: a user's own property tests, written with toolstream/testing.
    include: ['test/**/*.test.ts', 'examples/testing/**/*.test.ts'],
    testTimeout: 120_000,
    // Property tests are CPU-bound; two cores, so two workers.
    maxWorkers: 2,
  },
});
