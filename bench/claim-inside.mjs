/**
 * What `transactional(effect, { claim: 'inside' })` changes for copies of a long effect (issue 35):
 * one delivery whose effect takes BENCH_EFFECT_MS (1000), COPIES (20) copies of it sent while it
 * runs, and UNRELATED (20) other events sent just after, one at a time, on one store with a pool of
 * 10 connections (the store's default). For the default claim and for the claim inside, it reports
 * the most connections of the pool held by waiting copies (Postgres sessions waiting on a lock),
 * the copies' answers, and the unrelated deliveries' p50 and worst answer time. Runs on this
 * checkout's build (`npx -y pnpm@10.34.8 build` first); prints a table; writes nothing.
 *
 *   node bench/claim-inside.mjs
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createReceiver, sign } from '@payhook/core';
import { adapterOf } from '@payhook/core/adapter';
import { postgresStore } from '@payhook/store-postgres';
import { payloadFor } from './lib/payload.mjs';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const EFFECT_MS = Number(process.env.BENCH_EFFECT_MS ?? 1000);
const COPIES = Number(process.env.BENCH_COPIES ?? 20);
const UNRELATED = Number(process.env.BENCH_UNRELATED ?? 20);
const secret = 'whsec_bench_inside';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function measure(claim) {
  const table = `bench_inside_${randomUUID().slice(0, 8)}`;
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10, connectionTimeoutMillis: 2_000 });
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  const store = postgresStore({ pool, table, purge: false });
  await store.createTable();
  const slow = new Set();
  const effect = store.transactional(
    async (event) => {
      if (slow.has(event.reference)) await sleep(EFFECT_MS);
    },
    claim === 'inside' ? { claim: 'inside' } : undefined,
  );
  const receiver = createReceiver({ secret, store, logger: { warn() {}, error() {} } }).on('payment.success', effect);
  const { process: deliver } = adapterOf(receiver);
  const send = (reference, i) => {
    const body = JSON.stringify({ ...payloadFor(i), reference });
    const t0 = performance.now();
    return deliver({ method: 'POST', signature: sign(body, secret), body }).then((r) => ({
      outcome: `${r.status} ${r.report.outcome}`,
      ms: performance.now() - t0,
    }));
  };
  const reference = `ref_${randomUUID().slice(0, 16)}`;
  slow.add(reference);
  const first = send(reference, 0);
  await sleep(50);
  const copies = Array.from({ length: COPIES }, (_, i) => send(reference, i + 1));
  let peak = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const { rows } = await admin.query(
        `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
      );
      peak = Math.max(peak, rows[0].n);
      await sleep(20);
    }
  })();
  await sleep(100);
  const unrelated = [];
  for (let i = 0; i < UNRELATED; i++) unrelated.push(await send(`ref_${randomUUID().slice(0, 16)}`, 100 + i));
  const answers = {};
  for (const c of [await first, ...(await Promise.all(copies))]) answers[c.outcome] = (answers[c.outcome] ?? 0) + 1;
  watching = false;
  await watcher;
  const ms = unrelated.map((u) => u.ms).sort((a, b) => a - b);
  const outcomes = {};
  for (const u of unrelated) outcomes[u.outcome] = (outcomes[u.outcome] ?? 0) + 1;
  await store.close();
  await admin.query(`drop table if exists ${table}`);
  await Promise.all([pool.end(), admin.end()]);
  return {
    claim,
    peakWaiting: peak,
    answers,
    unrelatedP50: ms[Math.floor(ms.length / 2)],
    unrelatedMax: ms[ms.length - 1],
    unrelated: outcomes,
  };
}

const rows = [];
for (const claim of ['before', 'inside', 'before', 'inside']) rows.push(await measure(claim));
console.log(`An effect of ${EFFECT_MS} ms, ${COPIES} copies during it, then ${UNRELATED} unrelated events one at a time; pool of 10`);
console.log(
  '| claim | copies waiting in Postgres, most at once | answers to the first and its copies | unrelated: answers | p50 | worst |',
);
console.log('|---|---:|---|---|---:|---:|');
for (const r of rows) {
  const fmt = (o) =>
    Object.entries(o)
      .map(([k, v]) => `${v} × ${k}`)
      .join(', ');
  console.log(
    `| ${r.claim} | ${r.peakWaiting} | ${fmt(r.answers)} | ${fmt(r.unrelated)} | ${r.unrelatedP50.toFixed(1)} ms | ${r.unrelatedMax.toFixed(1)} ms |`,
  );
}
