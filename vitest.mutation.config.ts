import { defineConfig, mergeConfig } from 'vitest/config';
import { mutationGroup } from './scripts/mutation-groups.mjs';
import base from './vitest.config.js';

/**
 * The tests StrykerJS runs against each mutant of one group (scripts/mutation-groups.mjs): one
 * project, on the newest peers; the lowest-peers project would only repeat them.
 */
/** The newest project's values for `inject` (the peers' versions, which the store suites name). */
const [newest] = (base.test?.projects ?? []) as { test: { provide: Record<string, unknown> } }[];
const { provide } = newest!.test;

export default mergeConfig(
  { ...base, test: { ...base.test, projects: undefined } },
  defineConfig({ test: { name: 'mutation', include: mutationGroup().tests, provide } }),
);
