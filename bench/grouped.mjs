/**
 * Grouped durable writes (issue 35): the whole receiver on Postgres and Redis, this checkout
 * against an earlier commit built beside it, in one run with the rows interleaved.
 *
 *   git worktree add --detach /tmp/before 32b8e03
 *   (cd /tmp/before && npx -y pnpm@10.34.8 install --frozen-lockfile --prefer-offline &&
 *     npx -y pnpm@10.34.8 --filter @payhook/core --filter @payhook/store-postgres --filter @payhook/store-redis build)
 *   npx -y pnpm@10.34.8 build && node bench/grouped.mjs [/tmp/before]
 *   BENCH_STORES=postgres BENCH_HANDLER=transactional-inside node bench/grouped.mjs   # a transactional() handler, claim inside
 *   BENCH_STORES=memory,redis node bench/grouped.mjs   # Redis beside the memory store: what no server costs, the ceiling
 *
 * For each store and each side: deliveries per second through `process` (signature check, parse,
 * claim, an empty handler, done record) with 32 in flight, and the p50 and p99 of one delivery's
 * time with 1 in flight; round trips per delivery counted as statements sent (Postgres, by
 * wrapping the pool's `query`) or commands the server ran (Redis, `INFO commandstats`). Each side
 * has its own pool (10 connections, the store's default) or client. Prints a table and JSON;
 * writes nothing.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { payloadFor } from './lib/payload.mjs';

const BEFORE = resolve(process.argv[2] ?? process.env.BENCH_BEFORE ?? '/tmp/before');
if (!existsSync(resolve(BEFORE, 'packages/store-postgres/dist'))) {
  // `pnpm bench` runs every file here: without an earlier build beside it there is nothing to compare.
  console.error(`[bench/grouped] no earlier build at ${BEFORE}: make one as this file's header says. Skipped.`);
  process.exit(0);
}
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TRANSACTIONAL = process.env.BENCH_HANDLER === 'transactional' || process.env.BENCH_HANDLER === 'transactional-inside';
/** BENCH_HANDLER=transactional-inside: the claim in the effect's own transaction (an earlier side without the option ignores it). */
const INSIDE = process.env.BENCH_HANDLER === 'transactional-inside';

/** The side's packages, as built in the checkout at `root`. */
const sideOf = async (name, root) => {
  // The package's own exports map, as Node reads it for an import (the `node` condition first).
  const load = (pkg, sub) => {
    const dir = resolve(root, 'packages', pkg);
    const entry = JSON.parse(readFileSync(resolve(dir, 'package.json'), 'utf8')).exports[sub];
    const file = entry.node?.import?.default ?? entry.import?.default ?? entry.import;
    return import(pathToFileURL(resolve(dir, file)).href);
  };
  return {
    name,
    core: await load('core', '.'),
    adapter: await load('core', './adapter'),
    postgres: await load('store-postgres', '.'),
    redis: await load('store-redis', '.'),
  };
};

// The benches' own payload (about 600 bytes), each delivery its own reference.
const body = (reference, i) => JSON.stringify({ ...payloadFor(i), reference });

/** Distinct deliveries through the receiver for SECONDS, `inFlight` at once: per second, and each one's time. */
async function drive(side, store, inFlight) {
  const secret = 'whsec_bench';
  // BENCH_HANDLER=transactional (Postgres): the handler is an empty transactional() effect, its own commit with the done record.
  const transactional = TRANSACTIONAL && 'transactional' in store;
  const handler = transactional ? store.transactional(async () => {}, INSIDE ? { claim: 'inside' } : undefined) : () => {};
  const receiver = side.core.createReceiver({ secret, store, logger: { warn() {}, error() {} } }).on('payment.success', handler);
  const deliver = side.adapter.adapterOf(receiver).process;
  const run = randomUUID().slice(0, 8);
  let n = 0;
  const times = [];
  const until = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < until) {
        const i = n++;
        const b = body(`bench_${run}_${i}`, i);
        const t0 = performance.now();
        const r = await deliver({ method: 'POST', signature: side.core.sign(b, secret), body: b });
        times.push(performance.now() - t0);
        if (r.status !== 200) throw new Error(`bench: the ${side.name} receiver answered ${r.status}`);
      }
    }),
  );
  return { perSecond: times.length / ((performance.now() - started) / 1000), times };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const median = (xs) => pct(xs, 50);

async function redisCommands(admin) {
  const info = await admin.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
    // Commands a script runs are counted too; only calls that crossed the wire count here.
    if (['evalsha', 'eval', 'ping', 'hello', 'client', 'config', 'script'].includes(m[1])) total += Number(m[2]);
  }
  return total;
}

async function measure(side, kind, admin, f) {
  let trips;
  let store;
  if (kind === 'postgres') {
    const s = side.postgres.postgresStore({ connectionString: DATABASE_URL, table: `payhook_bench_${side.name}`, purge: false });
    let sent = 0;
    const query = s.pool.query.bind(s.pool);
    s.pool.query = (...args) => (sent++, query(...args));
    trips = async () => sent;
    store = s;
  } else if (kind === 'memory') {
    // The ceiling: the same receiver with no server to talk to, on the same two cores.
    store = side.core.memoryStore();
    trips = () => 0;
  } else {
    store = side.redis.redisStore({ url: REDIS_URL, prefix: `payhook-bench-${side.name}:` });
    trips = () => redisCommands(admin);
  }
  await drive(side, store, 1); // warm: the table, the scripts, the JIT
  const t0 = await trips();
  const many = await drive(side, store, 32);
  f.trips.push(((await trips()) - t0) / many.times.length);
  f.perSecond32.push(many.perSecond);
  const one = await drive(side, store, 1);
  f.p50.push(pct(one.times, 50));
  f.p99.push(pct(one.times, 99));
  await store.close?.();
}

const before = await sideOf('before', BEFORE);
const after = await sideOf('after', fileURLToPath(new URL('..', import.meta.url)));
const admin = new Redis(REDIS_URL);
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
const setting = async (name) => (await pool.query(`show ${name}`)).rows[0][name];
const machine = {
  node: process.version,
  postgres: await setting('server_version'),
  synchronousCommit: await setting('synchronous_commit'),
  redis: ((await admin.info('server')).match(/redis_version:(\S+)/) ?? [])[1],
};
for (const side of ['before', 'after']) await pool.query(`drop table if exists payhook_bench_${side}`);

const results = {};
for (const kind of (process.env.BENCH_STORES ?? 'postgres,redis').split(',')) {
  results[kind] = {};
  for (const side of [before, after]) results[kind][side.name] = { perSecond32: [], p50: [], p99: [], trips: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // ABBA: neither side always goes first on a machine whose load drifts.
    for (const side of round % 2 === 0 ? [before, after] : [after, before]) {
      await measure(side, kind, admin, results[kind][side.name]);
      console.error(kind, side.name, round, JSON.stringify(results[kind][side.name]));
    }
  }
}
for (const side of ['before', 'after']) await pool.query(`drop table if exists payhook_bench_${side}`);
await pool.end();
{
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', 'payhook-bench-*', 'COUNT', 1000);
    if (keys.length > 0) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
await admin.quit();

const fmt = (n, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
console.log(
  `${INSIDE ? "transactional() handler, { claim: 'inside' } on the sides that have it" : TRANSACTIONAL ? 'transactional() handler' : 'empty handler'}; Node ${machine.node}, PostgreSQL ${machine.postgres} (synchronous_commit=${machine.synchronousCommit}), Redis ${machine.redis}; ${ROUNDS} rounds of ${SECONDS} s, medians`,
);
console.log(
  '| store | side | deliveries/s, 32 in flight | round trips / delivery (Postgres: statements through the pool) | p50, 1 in flight (ms) | p99, 1 in flight (ms) |',
);
console.log('|---|---|---:|---:|---:|---:|');
for (const [kind, sides] of Object.entries(results)) {
  for (const [name, f] of Object.entries(sides)) {
    console.log(
      `| ${kind} | ${name} | ${fmt(median(f.perSecond32))} | ${fmt(median(f.trips), 2)} | ${fmt(median(f.p50), 3)} | ${fmt(median(f.p99), 3)} |`,
    );
  }
  const b = sides.before;
  const a = sides.after;
  console.log(
    `| ${kind} | after / before | ${fmt(median(a.perSecond32) / median(b.perSecond32), 2)}x | | ${fmt(median(a.p50) / median(b.p50), 2)}x | ${fmt(median(a.p99) / median(b.p99), 2)}x |`,
  );
}
console.log(JSON.stringify({ machine, results }));
