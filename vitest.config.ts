import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    // Property tests are CPU-bound; two cores, so two workers.
    maxWorkers: 2,
  },
});
