import { defineConfig } from 'vitest/config';

// The compose tests (`npm run test:compose`, through run.sh): the stack in Docker, one file at a
// time, each bringing its own stack up and down.
export default defineConfig({
  test: {
    include: ['test/compose/**/*.compose.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
