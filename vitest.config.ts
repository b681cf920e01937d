import { configDefaults, defineConfig } from 'vitest/config';

// Tiers by file name: *.unit.test.ts (pure), *.int.test.ts (real servers, PGlite, child
// processes), *.e2e.test.ts (the whole product through its public surface); see README.
export default defineConfig({
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'services/*/src/**/*.test.ts',
      'test/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
    ],
    // The compose tests need a Docker engine and build images: `npm run test:compose`.
    exclude: [...configDefaults.exclude, 'test/compose/**'],
    // Postgres and NATS in containers when no URL is given and a Docker engine answers.
    globalSetup: ['packages/test-infra/src/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
