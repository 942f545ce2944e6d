/**
 * The mutants StrykerJS cannot make (issue 52): breaks inside the Lua, SQL and DynamoDB expressions
 * that decide a claim (Stryker only empties a string, which any test notices), and in the Durable
 * Object, whose code runs in workerd from a bundle that Stryker's instrumented sources never reach.
 * The board's doors are here too: breaks of its authorization that must fail a test on every run,
 * whatever Stryker's coverage says.
 * Each is one textual change, written where a bug would run an event twice, lose one, or let a
 * stale token act. `pnpm test:mutation claims` applies them one at a time after Stryker's run,
 * runs the `tests` named (they must fail), and puts the file back.
 *
 * `from` must occur exactly once in `file`; `build` names a package to rebuild around the mutant,
 * for tests that load its dist/ (the Worker bundle, child processes); `project` is the vitest
 * project the tests belong to (default `payhook`; `alone` for the timing and load files).
 */
const REDIS = 'packages/store-redis/src/lua.ts';
const REDIS_TESTS = ['packages/store-redis/test/store-redis.test.ts'];
const PG = 'packages/store-postgres/src/sql/store-statements.ts';
const PG_TESTS = ['packages/store-postgres/test/store-postgres.test.ts'];
const PG_GROUPED = [...PG_TESTS, 'packages/store-postgres/test/grouped-writes.test.ts'];
const SQLITE = 'packages/store-sqlite/src/schema.ts';
const SQLITE_TESTS = ['packages/store-sqlite/test/store-sqlite.test.ts'];
const DYNAMO = 'packages/store-dynamodb/src/dynamodb-store.ts';
const DYNAMO_TESTS = ['packages/store-dynamodb/test/store-dynamodb.test.ts', 'packages/store-dynamodb/test/store-dynamodb-paths.test.ts'];
const DO = 'packages/store-durable-object/src/store-object.ts';
const DO_TESTS = ['test/runtimes/durable-object.test.ts'];

const BOARD_TESTS = [
  'packages/board/test/routes.test.ts',
  'packages/board/test/guard.test.ts',
  'packages/board/test/accounts/accounts-actions.test.ts',
  'packages/board/test/doors.test.ts',
];

/** @type {Record<string, { file: string, from: string, to: string, why: string, tests: string[], build?: string, project?: string }[]>} */
export const HAND_MUTANTS = {
  // The board's doors, also by hand: the breaks issue 52 found passing every test, and one Stryker
  // reported alive although its test fails on it (a runner's miss: checked here on every run).
  board: [
    {
      file: 'packages/board/src/board.ts',
      tests: BOARD_TESTS,
      why: 'a delivery page shown without asking authorize',
      from: 'const answer = await settings.authorize(request);',
      to: "const answer = path.startsWith('/deliveries/') ? { user: 'anyone' } : await settings.authorize(request);",
    },
    {
      file: 'packages/board/src/board.ts',
      tests: BOARD_TESTS,
      why: 'a request under a name the board is not served under is answered (DNS rebinding)',
      from: 'if (wrongHost !== undefined) {',
      to: 'if (false) {',
    },
    {
      file: 'packages/board/src/base/guard.ts',
      tests: BOARD_TESTS,
      why: 'a loopback board without `hosts` answers any name',
      from: 'if (at === undefined || !loopback(at)) return undefined;',
      to: 'return undefined;',
    },
    {
      file: 'packages/board/src/base/guard.ts',
      tests: BOARD_TESTS,
      why: "the token compare keeps only the last character's difference",
      from: 'diff |= a.charCodeAt(i) ^ b.charCodeAt(i)',
      to: 'diff = a.charCodeAt(i) ^ b.charCodeAt(i)',
    },
    {
      file: 'packages/board/src/routes.ts',
      tests: BOARD_TESTS,
      why: 'a read-only board or viewer acts with the page’s token',
      from: 'if (!view.canAct) return readOnly(view);',
      to: 'if (false) return readOnly(view);',
    },
    {
      file: 'packages/board/src/actions.ts',
      tests: BOARD_TESTS,
      why: "an account's staff act on the account their form names",
      from: 'if (view.viewer.account !== undefined || !view.platform) return view.viewer.account;',
      to: 'if (false) return view.viewer.account;',
    },
  ],
  claims: [
    // Redis (and Upstash, which runs the same scripts).
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'a done record is claimed again',
      from: "if rec[1] == 'done' then return",
      to: "if rec[1] == 'gone' then return",
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'the lease is set without NX: every claim wins',
      from: "ARGV[1], 'NX', 'PX', ARGV[2]",
      to: "ARGV[1], 'PX', ARGV[2]",
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'a redelivery counts as attempt 1',
      from: "redis.call('HINCRBY', KEYS[1], 'attempt', 1)",
      to: "1 + redis.call('HINCRBY', KEYS[1], 'attempt', 0)",
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'the record expires with the lease, forgetting its attempts',
      from: "redis.call('PEXPIRE', KEYS[1], ARGV[3])",
      to: "redis.call('PEXPIRE', KEYS[1], ARGV[2])",
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'another token is told it holds the claim',
      from: "if redis.call('GET', KEYS[2]) == ARGV[1] then return {'claimed'",
      to: "if redis.call('GET', KEYS[2]) ~= ARGV[1] then return {'claimed'",
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'any token completes a live claim',
      from: "if redis.call('GET', KEYS[2]) == ARGV[1] then\n  redis.call('HSET', KEYS[1], 'state', 'done'",
      to: "if redis.call('EXISTS', KEYS[2]) == 1 then\n  redis.call('HSET', KEYS[1], 'state', 'done'",
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'a done record keeps its lease, so its token can still release it',
      from: "  redis.call('DEL', KEYS[2])\n  redis.call('PEXPIRE', KEYS[1], ARGV[2])",
      to: "  redis.call('PEXPIRE', KEYS[1], ARGV[2])",
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: "a done record keeps the claim's retention, not its own",
      from: "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n  if ARGV[4]",
      to: '  if ARGV[4]',
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'any token completes a done record again',
      from: "if rec[1] == 'done' and rec[2] == ARGV[1] then return 1 end",
      to: "if rec[1] == 'done' then return 1 end",
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'any token releases a live claim',
      from: "if redis.call('GET', KEYS[2]) == ARGV[1] then\n  redis.call('DEL', KEYS[2])\n  redis.call('HSET', KEYS[1], 'state', 'released')",
      to: "if redis.call('EXISTS', KEYS[2]) == 1 then\n  redis.call('DEL', KEYS[2])\n  redis.call('HSET', KEYS[1], 'state', 'released')",
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'an extension does not move the lease',
      from: "  redis.call('PEXPIRE', KEYS[2], ARGV[2])\n",
      to: '',
    },
    {
      file: REDIS,
      tests: REDIS_TESTS,
      why: 'an extension lets the record end before its lease',
      from: "if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then",
      to: 'if false then',
    },
    // PostgreSQL.
    {
      file: PG,
      tests: PG_TESTS,
      why: 'a released claim is not free',
      from: "SELECT state, attempt, outcome, completed_at, lease_expires_at, expires_at,\n               expires_at <= clock_timestamp()\n               OR state = 'released'\n",
      to: 'SELECT state, attempt, outcome, completed_at, lease_expires_at, expires_at,\n               expires_at <= clock_timestamp()\n',
    },
    {
      file: PG,
      tests: PG_TESTS,
      why: 'a live claim is taken over',
      from: "               OR (r.state = 'claimed' AND r.lease_expires_at <= clock_timestamp()))\n        RETURNING r.attempt\n      ),\n      won AS (SELECT attempt FROM inserted",
      to: "               OR r.state = 'claimed')\n        RETURNING r.attempt\n      ),\n      won AS (SELECT attempt FROM inserted",
    },
    {
      file: PG,
      tests: PG_TESTS,
      why: 'a redelivery keeps attempt 1',
      from: 'THEN 1 ELSE r.attempt + 1 END,\n          token = $2,\n          lease_expires_at',
      to: 'THEN 1 ELSE r.attempt END,\n          token = $2,\n          lease_expires_at',
    },
    {
      file: PG,
      tests: PG_TESTS,
      why: 'any token acts on a live claim',
      from: 'const held = `key = $1 AND token = $2 AND',
      to: 'const held = `key = $1 AND (token = $2 OR true) AND',
    },
    {
      file: PG,
      tests: PG_TESTS,
      why: 'a lapsed token still acts',
      from: "state = 'claimed' AND lease_expires_at > clock_timestamp()`;",
      to: "state = 'claimed'`;",
    },
    {
      file: PG,
      tests: PG_TESTS,
      why: 'a held claim reads as done',
      from: "SELECT $1, CASE WHEN state = 'done' AND NOT free THEN 'done'",
      to: "SELECT $1, CASE WHEN NOT free THEN 'done'",
    },
    {
      file: PG,
      tests: PG_GROUPED,
      why: 'a live claim is taken over in a grouped claim',
      from: "OR (r.state = 'claimed' AND r.lease_expires_at <= clock_timestamp()))\n        RETURNING r.key, r.attempt",
      to: "OR r.state = 'claimed')\n        RETURNING r.key, r.attempt",
    },
    {
      file: PG,
      tests: PG_GROUPED,
      why: 'any token completes a live claim in a grouped complete',
      from: "WHERE r.key = req.key AND r.token = req.token AND r.state = 'claimed'",
      to: "WHERE r.key = req.key AND r.state = 'claimed'",
    },
    // SQLite (and the Durable Object, which runs the same statements).
    {
      file: SQLITE,
      tests: SQLITE_TESTS,
      why: 'any token acts on a live claim',
      from: "const live = `key = ? AND state = 'claimed' AND token = ?",
      to: "const live = `key = ? AND state = 'claimed' AND (token = ? OR 1)",
    },
    {
      file: SQLITE,
      tests: SQLITE_TESTS,
      why: 'a lapsed token still acts',
      from: 'AND lease_until > ?`;',
      to: 'AND (lease_until > ? OR 1)`;',
    },
    {
      file: SQLITE,
      tests: SQLITE_TESTS,
      why: 'any token completes a done record again',
      from: "WHERE key = ? AND state = 'done' AND token = ? AND",
      to: "WHERE key = ? AND state = 'done' AND (token = ? OR 1) AND",
    },
    {
      file: SQLITE,
      tests: SQLITE_TESTS,
      why: 'an extension lets the record end before its lease',
      from: 'expires_at = max(expires_at, ?)',
      to: 'expires_at = min(expires_at, ?)',
    },
    {
      file: SQLITE,
      tests: SQLITE_TESTS,
      why: 'the purge deletes live records',
      from: 'WHERE expires_at <= ? LIMIT ?',
      to: 'WHERE expires_at >= ? LIMIT ?',
    },
    {
      file: 'packages/store-sqlite/src/sqlite-store.ts',
      tests: ['test/processes/multi-process.test.ts'],
      project: 'alone',
      build: '@payhook/store-sqlite',
      why: 'a claim outside a write transaction: two processes on one file both win',
      from: 'transaction: (fn) => inTransaction(db, fn) }',
      to: 'transaction: (fn) => fn() }',
    },
    // DynamoDB.
    {
      file: DYNAMO,
      tests: DYNAMO_TESTS,
      why: 'a takeover without the lease condition: a live claim is taken',
      from: "'ex > :now AND (st = :released OR (st = :claimed AND lu <= :now))'",
      to: "'ex > :now AND (st = :released OR st = :claimed OR lu <= :now)'",
    },
    {
      file: DYNAMO,
      tests: DYNAMO_TESTS,
      why: 'a takeover counts as attempt 1',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source's own template, as text
      from: 'UpdateExpression: `${set}, att = att + :one`',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source's own template, as text
      to: 'UpdateExpression: `${set}, att = :one`',
    },
    {
      file: DYNAMO,
      tests: DYNAMO_TESTS,
      why: 'a live record is claimed as new',
      from: "'attribute_not_exists(pk) OR ex <= :now'",
      to: "'attribute_not_exists(pk) OR ex >= :now'",
    },
    {
      file: DYNAMO,
      tests: DYNAMO_TESTS,
      why: 'any token acts on a live claim',
      from: "'st = :claimed AND tk = :tk AND lu > :now'",
      to: "'st = :claimed AND (tk = :tk OR lu > :now) AND lu > :now'",
    },
    {
      file: DYNAMO,
      tests: DYNAMO_TESTS,
      why: 'a lapsed token still acts',
      from: "'st = :claimed AND tk = :tk AND lu > :now'",
      to: "'st = :claimed AND tk = :tk AND (lu > :now OR tk = :tk)'",
    },
    // The Durable Object's own code (its SQL is SQLite's, above).
    {
      file: DO,
      tests: DO_TESTS,
      build: '@payhook/store-durable-object',
      why: 'a release keeps the claim',
      from: 'return c.release(call.key, call.token, call.retentionMs);',
      to: 'return false;',
    },
    {
      file: DO,
      tests: DO_TESTS,
      build: '@payhook/store-durable-object',
      why: 'a claim kept only as long as its lease',
      from: 'return c.claim(call.key, call.leaseMs, call.retentionMs);',
      to: 'return c.claim(call.key, call.leaseMs, call.leaseMs);',
    },
  ],
};
