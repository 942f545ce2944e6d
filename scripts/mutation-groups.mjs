/**
 * What `pnpm test:mutation` breaks and which tests judge each break (issue 38). Each group is one
 * StrykerJS run: its files are mutated one change at a time, and only its tests run against each
 * mutant. Narrow lists keep the run in minutes, since a mutant in code that runs while a suite
 * sets up (a receiver made in beforeAll, a script the store loads) is judged by every test of the
 * group. These are the files where a silent break is a security or exactly-once bug.
 */
export const MUTATION_GROUPS = {
  signature: {
    mutate: ['packages/core/src/protocol/signature.ts'],
    tests: ['packages/core/test/**/{signature,web-crypto}.test.ts'],
  },
  body: {
    mutate: ['packages/core/src/steps/intake.ts', 'packages/core/src/reading/read-body.ts', 'packages/core/src/node-bridge/node-bridge.ts'],
    tests: [
      'packages/core/test/**/{receiver,node-bridge,stranger,body-limits}.test.ts',
      'test/adapters/{express,fastify,hono,bounded-senders}.test.ts',
    ],
  },
  // The hand check of a delivery's shape (issue 54): every mutant must break its agreement with zod.
  shape: {
    mutate: ['packages/core/src/protocol/event-check.ts', 'packages/core/src/base/lru.ts'],
    tests: ['packages/core/test/**/{event-check,fast-path,lru}.test.ts'],
  },
  options: {
    mutate: ['packages/core/src/settings/options.ts'],
    tests: ['packages/core/test/**/{receiver,fast-path,stranger,options}.test.ts'],
  },
  run: {
    mutate: [
      'packages/core/src/steps/claim-and-run.ts',
      'packages/core/src/steps/claim/claim-inside.ts',
      'packages/core/src/observing/outcome.ts',
    ],
    tests: [
      'packages/core/test/**/{receiver,duplicate-wait,fast-path,deadlines,stranger,claim-and-run,claim-and-run-budget,claim-inside}.test.ts',
      'packages/testing/test/deliver.test.ts',
    ],
  },
  stores: {
    mutate: [
      'packages/core/src/storage/memory-store.ts',
      'packages/store-redis/src/{lua,scripted-store,redis-store,redis-client}.ts',
      'packages/store-postgres/src/{sql/store-statements,sql/statement-names,postgres-store,transactional}.ts',
    ],
    tests: [
      'test/processes/store-down.test.ts',
      'packages/store-redis/test/{store-redis,ledger-redis}.test.ts',
      'packages/store-postgres/test/{store-postgres,store-postgres-limits,store-postgres-purge,ledger-postgres,claim-inside,prepared-statements}.test.ts',
      'packages/core/test/**/{memory-ledger,memory-store-warning,fast-path}.test.ts',
    ],
  },
  // The board (issues 36, 52), in two groups of an hour or less each. Its doors: a silent break here
  // lets a cross-site post act, a stranger's markup run, one account see another's, or a stream pile up.
  board: {
    mutate: ['packages/board/src/{base/guard,routes,board,base/scope,actions,live}.ts'],
    tests: ['packages/board/test/**/*.test.ts'],
  },
  // The rest of the board: its pages, chart, options and Node mount.
  'board-views': {
    mutate: ['packages/board/src/{views/*,base/options,node,assets}.ts'],
    tests: ['packages/board/test/**/*.test.ts'],
  },
  // The ledger (issue 52): erase, the replay check, dead letters, an account's view, and the memory ledger's retention.
  ledger: {
    mutate: ['packages/core/src/ledger/*.ts', 'packages/core/src/storage/memory-ledger.ts'],
    tests: ['packages/core/test/**/{ledger,memory-ledger,accounts-ledger,ledger-public-endpoint,ledger-replay,ledger-erase}.test.ts'],
  },
  // The ordering guard and the record check (issue 52): a break runs a refund before its payment, or an event the service disowns.
  order: {
    mutate: ['packages/core/src/steps/{order-guard,record-check}.ts'],
    tests: [
      'packages/core/test/**/{claim-and-run,options,order-guard,record-check}.test.ts',
      'test/ordering/{ordering,ordering-accounts,ordering-truth}.test.ts',
    ],
  },
  // The claim paths of the newer stores (issue 52); their Lua, SQL and DynamoDB expressions, and the Durable Object, by hand (scripts/hand-mutants.mjs).
  claims: {
    mutate: [
      'packages/store-sqlite/src/{claims,sqlite-store}.ts',
      'packages/store-dynamodb/src/dynamodb-store.ts',
      'packages/store-upstash/src/upstash-store.ts',
      'packages/store-redis/src/scripted-store.ts',
    ],
    tests: [
      'packages/store-sqlite/test/{store-sqlite,node-sqlite}.test.ts',
      'packages/store-dynamodb/test/{store-dynamodb,store-dynamodb-paths}.test.ts',
      'packages/store-upstash/test/store-upstash.test.ts',
    ],
  },
  // What a stranger's text goes through on its way to a terminal or a page (issue 52).
  escaping: {
    mutate: ['packages/core/src/base/escape-text.ts', 'packages/core/src/base/html.ts'],
    tests: [
      'packages/core/test/protocol/escape-text.test.ts',
      'packages/reference/test/pages/pages.test.ts',
      'packages/board/test/views/views.test.ts',
    ],
  },
};

/** The group named by PAYHOOK_MUTATION_GROUP (set by scripts/mutation.mjs). */
export function mutationGroup() {
  const name = process.env.PAYHOOK_MUTATION_GROUP ?? '';
  const group = MUTATION_GROUPS[name];
  if (!group) {
    throw new Error(
      `[payhook] PAYHOOK_MUTATION_GROUP must name a group (${Object.keys(MUTATION_GROUPS).join(', ')}); got '${name}'. Run \`pnpm test:mutation\`, which sets it.`,
    );
  }
  return { name, ...group };
}
