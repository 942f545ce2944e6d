import { configDefaults, defineConfig } from 'vitest/config';
import { alias } from './vitest.config.js';

/**
 * `pnpm test:unit`, the inner loop (issue 32): the tests that need no service (Redis, Postgres), no
 * browser, no child process and no build, in one project. In-process servers on localhost count as
 * unit tests. Everything here also runs in `pnpm test` (vitest.config.ts, project `payhook`).
 * The root files listed here drive several packages at once (CONTRIBUTING.md, "Where tests go").
 */
export default defineConfig({
  resolve: { alias },
  test: {
    name: 'unit',
    include: [
      'packages/core/test/**/*.test.ts',
      'packages/testing/test/**/*.test.ts',
      'packages/client/test/client-offline.test.ts',
      'test/ordering/{ordering,ordering-truth,reconcile}.test.ts',
      'test/adapters/{express,fastify,hono}.test.ts',
      'test/blackbox/client-vs-sdk-fixtures.test.ts',
      'packages/reference/test/{api,in-process,providers,state,state-file}.test.ts',
      'packages/reference/test/security/ssrf.test.ts',
      'packages/reference/test/pages/{page-guard,pages}.test.ts',
      'test/repo/mutation-groups.test.ts',
    ],
    // Runs a plain Node script as a child process (issue 30's exit code).
    exclude: [...configDefaults.exclude, 'packages/core/test/stranger.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    maxWorkers: 2,
  },
});
