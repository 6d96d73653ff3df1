import { defineConfig } from 'vitest/config';

/**
 * Two suites. `unit` (npm test): fast tests that run the TypeScript sources only, a file per
 * core at once (`--maxWorkers=100%`; vitest leaves one core free by default). `e2e` (npm run
 * test:e2e, which builds first): the `*.e2e.test.ts` files, which spawn the compiled CLI, drive
 * the pool threads (compiled modules), run whole workflows or check many random configs, with
 * vitest's default of a core left free, which their pool threads use. Its global setup refuses a
 * dist/ older than the sources.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.e2e.test.ts'],
          globalSetup: ['test/helpers/temp-root.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e.test.ts'],
          globalSetup: ['test/helpers/fresh-dist.ts', 'test/helpers/temp-root.ts'],
        },
      },
    ],
  },
});
