// @ts-check
import { mutationGroup } from './scripts/mutation-groups.mjs';

const group = mutationGroup();

/**
 * Mutation testing, one group at a time (`pnpm test:mutation` runs them all: scripts/mutation.mjs).
 * StrykerJS changes one thing in a file at a time and runs the group's tests; a mutant they all
 * survive is a break nobody would notice. Slow (minutes a group), so it is not part of `.ci/run`;
 * the scheduled workflow runs it. Scores and the survivors judged equivalent: docs/guides/testing/README.md.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  plugins: ['@stryker-mutator/vitest-runner'],
  coverageAnalysis: 'perTest',
  mutate: group.mutate,
  reporters: ['clear-text', 'progress', 'json'],
  clearTextReporter: { allowColor: false, logTests: false },
  jsonReporter: { fileName: `reports/mutation/${group.name}.json` },
  concurrency: 1,
  timeoutMS: 5_000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  warnings: { slow: false },
};
