/**
 * Store benchmarks: events per second, round trips per event and claim latency for the memory,
 * Redis and Postgres stores, and writes them to BENCHMARKS.md under "## Stores".
 *
 *   ./node_modules/.bin/tsx bench/stores.ts            # REDIS_URL, DATABASE_URL as for the tests
 *   ./node_modules/.bin/tsx bench/stores.ts --no-write # print only
 *
 * An "event" is what the receiver asks of its store for a new delivery: one claim, then one
 * complete. Round trips are counted on the wire side: Redis by the delta of `INFO commandstats`
 * (all commands, less the INFO calls themselves), Postgres by wrapping `pool.query`.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createReceiver, memoryStore, sign, type Store } from '@payhook/core';
import { adapterOf } from '@payhook/core/adapter';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoStore } from '@payhook/store-dynamodb';
import { sqliteStore } from '@payhook/store-sqlite';
import dynalite from 'dynalite';
import type { AddressInfo } from 'node:net';
import { upstashStore } from '@payhook/store-upstash';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startUpstashBridge } from '@payhook/test-support/servers/upstash-bridge';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const write = !process.argv.includes('--no-write');

interface Row {
  store: string;
  concurrency: number;
  eventsPerSecond: number;
  roundTrips: number | null;
  p50: number;
  p99: number;
}

/** claim + complete on fresh keys for SECONDS, `concurrency` events in flight. */
async function measure(store: Store, concurrency: number): Promise<{ events: number; seconds: number; claims: number[] }> {
  const run = randomUUID().slice(0, 8);
  let n = 0;
  const claims: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const key = `bench-${run}:ref_${n++}:payment.success`;
        const t0 = performance.now();
        const c = await store.claim(key, 30_000);
        claims.push(performance.now() - t0);
        if (c.status !== 'claimed') throw new Error(`bench: expected a claim, got ${c.status}`);
        await store.complete(key, c.token);
      }
    }),
  );
  return { events: claims.length, seconds: (performance.now() - started) / 1000, claims };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/** Commands clients sent, from the server's side: script calls count once, not once per command inside them. */
async function redisRoundTrips(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
    // The commands a script runs are counted too; only the script calls themselves crossed the wire.
    if (m[1] === 'evalsha' || m[1] === 'eval') total += Number(m[2]);
  }
  return total;
}

async function bench(name: string, make: () => Promise<{ store: Store; trips: () => Promise<number>; done: () => Promise<void> }>) {
  const rows: Row[] = [];
  const { store, trips, done } = await make();
  // Warm up: connections, the table, the scripts.
  await measure(store, 8);
  for (const concurrency of [1, 32]) {
    const before = await trips();
    const r = await measure(store, concurrency);
    const after = await trips();
    rows.push({
      store: name,
      concurrency,
      eventsPerSecond: r.events / r.seconds,
      roundTrips: Number.isNaN(before) ? null : (after - before) / r.events,
      p50: pct(r.claims, 50),
      p99: pct(r.claims, 99),
    });
    console.log(rows.at(-1));
  }
  await done();
  return rows;
}

/** The whole receiver (sign check, parse, claim, handler, complete) on each store, for context. */
async function receiverThroughput(store: Store, concurrency = 32): Promise<number> {
  const secret = 'whsec_bench';
  const receiver = createReceiver({ secret, store, logger: { warn() {}, error() {} } }).on('payment.success', () => {});
  const run = randomUUID().slice(0, 8);
  let n = 0;
  let events = 0;
  const until = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const body = JSON.stringify({
          event: 'payment.success',
          mode: 'sandbox',
          reference: `bench_${run}_${n++}`,
          merchantReference: 'o',
          amount: '10.00',
          serviceFee: '0.30',
          currency: 'ETB',
          status: 'completed',
          paymentMethod: 'telebirr',
          customer: { name: 'A', email: 'a@example.com', phone: '251900000000' },
          paidAt: '2026-01-01T00:00:00.000Z',
          createdAt: '2026-01-01T00:00:00.000Z',
        });
        const r = await adapterOf(receiver).process({ method: 'POST', signature: sign(body, secret), body });
        if (r.status !== 200) throw new Error(`bench: receiver answered ${r.status}`);
        events++;
      }
    }),
  );
  return events / ((performance.now() - started) / 1000);
}

const rows: Row[] = [];
const pipeline: Record<string, number> = {};

rows.push(...(await bench('memory', async () => ({ store: memoryStore(), trips: async () => NaN, done: async () => {} }))));
pipeline.memory = await receiverThroughput(memoryStore());

const admin = new Redis(REDIS_URL);
const redisVersion = ((await admin.info('server')).match(/redis_version:(\S+)/) ?? [])[1];
rows.push(
  ...(await bench('redis', async () => {
    const store = redisStore({ url: REDIS_URL, prefix: 'payhook-bench:' });
    // Every other command the store could send is counted client-side, so nothing escapes the tally.
    let other = 0;
    const client = store.client as Redis;
    const send = client.sendCommand.bind(client);
    client.sendCommand = ((...args: Parameters<typeof send>) => {
      const name = (args[0] as { name?: string }).name;
      if (name !== 'evalsha' && name !== 'eval') other++;
      return send(...args);
    }) as typeof send;
    return { store, trips: async () => (await redisRoundTrips(admin)) + other, done: () => store.close() };
  })),
);
{
  const store = redisStore({ url: REDIS_URL, prefix: 'payhook-bench:' });
  pipeline.redis = await receiverThroughput(store);
  await store.close();
}

// SQLite: a file in the temporary directory, WAL, synchronous=FULL (the store's own settings):
// every commit waits for the disk. In process, so no round trips; each event is two commits.
const sqliteDir = mkdtempSync(join(tmpdir(), 'payhook-bench-sqlite-'));
rows.push(
  ...(await bench('sqlite', async () => {
    const store = sqliteStore({ path: join(sqliteDir, 'bench.db'), driver: Database });
    return { store, trips: async () => NaN, done: () => store.close() };
  })),
);
{
  const store = sqliteStore({ path: join(sqliteDir, 'bench.db'), driver: Database });
  pipeline.sqlite = await receiverThroughput(store);
  await store.close();
  rmSync(sqliteDir, { recursive: true, force: true });
}

// DynamoDB: dynalite (DynamoDB's API on an in-memory LevelDB) on loopback; round trips are the
// requests the client sends, counted by a middleware.
{
  const server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  let requests = 0;
  client.middlewareStack.add((next) => (args) => (requests++, next(args)), { step: 'finalizeRequest' });
  await client.send(
    new CreateTableCommand({
      TableName: 'payhook-bench',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  rows.push(
    ...(await bench('dynamodb (dynalite)', async () => ({
      store: dynamoStore({ table: 'payhook-bench', client }),
      trips: async () => requests,
      done: async () => {},
    }))),
  );
  pipeline.dynamodb = await receiverThroughput(dynamoStore({ table: 'payhook-bench', client }));
  client.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

// Upstash: the REST protocol over the same Redis, through the tests' bridge on loopback (no TLS,
// no internet): the protocol's cost, not Upstash's. Round trips are the bridge's HTTP requests.
const bridge = await startUpstashBridge(REDIS_URL);
rows.push(
  ...(await bench('upstash (REST bridge)', async () => ({
    store: upstashStore({ url: bridge.url, token: bridge.token, prefix: 'payhook-bench:' }),
    trips: async () => bridge.requests(),
    done: async () => {},
  }))),
);
pipeline.upstash = await receiverThroughput(upstashStore({ url: bridge.url, token: bridge.token, prefix: 'payhook-bench:' }));
await bridge.close();

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 });
let queries = 0;
const query = pool.query.bind(pool);
pool.query = ((...args: Parameters<typeof query>) => {
  queries++;
  return query(...args);
}) as typeof pool.query;
const pgVersion = (await query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
const syncCommit = (await query<{ synchronous_commit: string }>('show synchronous_commit')).rows[0]!.synchronous_commit;
const table = `payhook_bench_${randomUUID().slice(0, 8)}`;
rows.push(
  ...(await bench('postgres', async () => {
    const store = postgresStore({ pool, table });
    return { store, trips: async () => queries, done: async () => {} };
  })),
);
pipeline.postgres = await receiverThroughput(postgresStore({ pool, table }));
await query(`drop table if exists ${table}`);
await pool.end();
await admin.quit();

// Clean the bench keys out of Redis.
{
  const r = new Redis(REDIS_URL);
  let cursor = '0';
  do {
    const [next, keys] = await r.scan(cursor, 'MATCH', 'payhook-bench:*', 'COUNT', 1000);
    cursor = next;
    if (keys.length) await r.unlink(...keys);
  } while (cursor !== '0');
  await r.quit();
}

const f = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const section = `## Stores

Measured by \`bench/stores.ts\` (\`./node_modules/.bin/tsx bench/stores.ts\`) on ${new Date().toISOString().slice(0, 10)}:
Node ${process.version}, ${cpus().length} CPU (${cpus()[0]?.model.trim()}), Redis ${redisVersion} and PostgreSQL ${pgVersion}
on loopback, ${SECONDS} s per figure. An event is one claim and one complete on a fresh key,
as the receiver does for a new delivery; "in flight" is how many events run at once in one process.
Round trips are counted at the server for Redis (\`INFO commandstats\` deltas of \`evalsha\`/\`eval\`,
plus any other command the store's client sends), as HTTP requests at the bridge for Upstash and
by a middleware of the client for DynamoDB, and
by wrapping \`pool.query\` for Postgres.

| store | in flight | events/s | round trips / event | claim p50 (ms) | claim p99 (ms) |
|---|---:|---:|---:|---:|---:|
${rows
  .map(
    (r) =>
      `| ${r.store} | ${r.concurrency} | ${f(r.eventsPerSecond)} | ${r.roundTrips === null ? '0 (in process)' : f(r.roundTrips, 2)} | ${f(r.p50, 3)} | ${f(r.p99, 3)} |`,
  )
  .join('\n')}

Through the whole receiver (signature check, parse, claim, an empty handler, complete), 32 in
flight: memory ${f(pipeline.memory!)}, Redis ${f(pipeline.redis!)}, SQLite ${f(pipeline.sqlite!)},
Upstash over the bridge ${f(pipeline.upstash!)}, DynamoDB on dynalite ${f(pipeline.dynamodb!)}, Postgres ${f(pipeline.postgres!)} events/s.

- Redis: 2 round trips per event (one \`EVALSHA\` to claim, one to complete), the target.
  Duplicates cost one round trip and write nothing.
- SQLite: in the process, on a file in ${tmpdir()}; two commits per event (the claim's write
  transaction, the done record's statement), each waiting for the disk (WAL, \`synchronous=FULL\`).
  The calls are synchronous, so events in flight take turns: 32 in flight gain nothing over 1.
- Upstash: the same two scripts, each an HTTP request to a bridge on loopback that runs it on the
  same Redis (\`test/support/servers/upstash-bridge.ts\`); a real database adds TLS and the round trip to
  its region, tens of milliseconds. Calls made in the same tick share one request
  (\`@upstash/redis\`'s auto-pipelining), so at 32 in flight an event costs fewer than 2 requests.
- DynamoDB: one conditional write to claim and one to complete, against dynalite on loopback
  (a JavaScript implementation on an in-memory LevelDB): the client's own cost (signing, JSON,
  HTTP) and dynalite's, not DynamoDB's, whose writes take single-digit milliseconds in region.
- Postgres: 2 statements per event alone; the claims made in one turn of the event loop share
  one statement, and so do their done records (issue 35), so at 32 in flight an event costs
  fewer. Its figures are bound by the commit's WAL flush (\`synchronous_commit=${syncCommit}\`): every
  claim and every done record is durable before it is answered, which is what makes a crash safe.
  Duplicates that find a live claim or a done record take no row lock.
`;

console.log(`\n${section}`);
if (write) {
  const path = fileURLToPath(new URL('../BENCHMARKS.md', import.meta.url));
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  // Only this section changes: other sections (the core pipeline) belong to other scripts.
  const re = /^## Stores\n[\s\S]*?(?=^## |(?![\s\S]))/m;
  const next = re.test(current) ? current.replace(re, `${section}\n`) : `${current.trimEnd()}\n\n${section}`;
  writeFileSync(path, next.trimEnd() + '\n');
  console.log(`wrote the Stores section of ${path}`);
}
