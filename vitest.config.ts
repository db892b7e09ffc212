import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Examples import the package by name, as a user does: tsconfig.json's `paths` map the names to src/
  // (as they do for tsc and tsx).
  resolve: { tsconfigPaths: true },
  test: {
    // examples/testing: a user's own property tests, written with toolstream/testing.
    include: ['test/**/*.test.ts', 'examples/testing/**/*.test.ts'],
    testTimeout: 120_000,
    // Set-up and tear-down start and stop real servers (Redis, worker processes, Chromium), which on a
    // busy machine (CI beside other jobs) takes tens of seconds, not vitest's default 10.
    hookTimeout: 120_000,
    // Property tests are CPU-bound; two cores, so two workers.
    maxWorkers: 2,
    // Every process a test starts is stopped however the test ends (test/support/leftovers.ts).
    globalSetup: ['./test/support/globalSetup.ts'],
    setupFiles: ['./test/support/setup.ts'],
    // The default summary, then what was skipped and why.
    reporters: ['default', './test/support/skipReporter.ts'],
  },
});
