/**
 * The ledger under load, on each store: 10,000 signed deliveries over HTTP (7,000 events, 1,000
 * copies sent at the same moment as their original to the other receiver, 2,000 copies sent after
 * it), some handlers slow, some failing their first run. The ledger must hold exactly one record
 * per attempt, saying what was answered, and its queries must tell what happened to a reference.
 * Redis and Postgres run two receivers, each with its own store on the same backend (two processes).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { memoryStore, type LedgerEntry, type Receiver } from '@payhook/core';
import type { Ledger } from '@payhook/core/store';
import { redisStore } from '@payhook/store-redis';
import { postgresStore } from '@payhook/store-postgres';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import {
  DELIVERIES,
  EVENTS,
  attemptsByRef,
  caughtUp,
  deliverAll,
  listAll,
  loadReceiver,
  plan,
  runState,
  serve,
  type Plan,
  type RunState,
} from './load-helpers.js';

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();

const SEED = 20_240_611;
const LEDGER = { maxEntries: 20_000 };
const TIMEOUT = 120_000;
const tag = () => randomUUID().replaceAll('-', '').slice(0, 10);

/** Send the plan to the receivers, wait for the ledger, and check it against every answer. */
async function loadRun(store: string, p: Plan, receivers: Receiver[], ledger: Ledger, state: RunState) {
  const server = await serve(receivers);
  const started = performance.now();
  let answers: Awaited<ReturnType<typeof deliverAll>>;
  try {
    answers = await deliverAll(p, server.urls);
  } finally {
    await server.close();
  }
  const answered = performance.now();
  let all = await caughtUp(ledger, DELIVERIES, 30_000);
  const caught = performance.now();
  // Anything past the count (a record written twice) would come in the batches still flushing: wait for every writer to finish.
  await Promise.all(receivers.map((r) => r.idle()));
  const countStart = performance.now();
  all = await listAll(ledger);
  const countMs = performance.now() - countStart;

  const wallMs = answered - started;
  const outcomes: Record<string, number> = {};
  for (const a of answers) outcomes[`${a.status} ${a.outcome}`] = (outcomes[`${a.status} ${a.outcome}`] ?? 0) + 1;
  console.log(
    `[ledger load] ${store}: ${answers.length} deliveries in ${wallMs.toFixed(0)} ms (${((answers.length / wallMs) * 1000).toFixed(0)}/s); ` +
      `ledger caught up ${(caught - answered).toFixed(0)} ms after the last answer (one count of all records: ${countMs.toFixed(0)} ms); ${all.length} records; answers ${JSON.stringify(outcomes)}; ` +
      `${state.running} claims found their event running`,
  );

  expect(answers.length).toBe(DELIVERIES);
  expect(state.problems).toEqual([]);
  // Copies did meet their event running (then waited for it, or answered 409).
  expect(state.running).toBeGreaterThan(0);
  // Exactly one record per attempt, each its own id, newest first.
  expect(all.length).toBe(DELIVERIES);
  expect(new Set(all.map((e) => e.id)).size).toBe(DELIVERIES);
  expect(all.every((e, i) => i === 0 || all[i - 1]!.id > e.id)).toBe(true);

  // Per reference, the ledger's answers are the client's, attempt for attempt.
  const client = attemptsByRef(answers);
  const recorded = attemptsByRef(all);
  const differ = [...new Set([...client.keys(), ...recorded.keys()])].filter(
    (ref) => JSON.stringify(client.get(ref)) !== JSON.stringify(recorded.get(ref)),
  );
  expect(differ.slice(0, 5).map((ref) => ({ ref, client: client.get(ref), ledger: recorded.get(ref) }))).toEqual([]);
  expect(client.size).toBe(EVENTS);

  // Every record: a verified webhook with its duration; a sample's body is the event sent.
  const bad = all.filter((e) => e.signature !== 'valid' || e.source !== 'webhook' || !(e.durationMs >= 0) || e.event !== 'payment.success');
  expect(bad.slice(0, 3)).toEqual([]);
  const sent = new Map(p.events.map((e) => [e.reference, e.event]));
  for (let i = 0; i < 100; i++) {
    const e = all[Math.floor((i * all.length) / 100)]!;
    expect(e.bodyEncoding).toBe('utf8');
    expect(JSON.parse(e.body!)).toEqual(sent.get(e.reference!));
  }

  // What happened to a reference: its attempts, newest first, and nothing else.
  const byRef = new Map<string, LedgerEntry[]>();
  for (const e of all) byRef.set(e.reference!, [...(byRef.get(e.reference!) ?? []), e]);
  const several = [...byRef.keys()].filter((ref) => byRef.get(ref)!.length > 1).sort();
  expect(several.length).toBeGreaterThanOrEqual(50);
  for (let i = 0; i < 50; i++) {
    const ref = several[Math.floor((i * several.length) / 50)]!;
    const found = await ledger.list({ reference: ref });
    expect(found.map((e) => e.id)).toEqual(byRef.get(ref)!.map((e) => e.id));
    expect(found.map((e) => `${e.status} ${e.outcome}`).sort()).toEqual(client.get(ref));
  }
  // The failed attempts across the run: as many as the client's 500s, and the same records.
  const failed = await listAll(ledger, { outcome: 'failed' });
  const failedAnswers = answers.filter((a) => a.status === 500);
  expect(failedAnswers.length).toBeGreaterThan(0);
  expect(failedAnswers.every((a) => a.outcome === 'failed')).toBe(true);
  expect(failed.length).toBe(failedAnswers.length);
  expect(failed.map((e) => e.id)).toEqual(all.filter((e) => e.outcome === 'failed').map((e) => e.id));
  expect(attemptsByRef(failed)).toEqual(attemptsByRef(failedAnswers));

  // Each event's handler completed exactly once, across receivers.
  const notOnce = p.events.filter((e) => state.runs.get(e.reference) !== 1).map((e) => [e.reference, state.runs.get(e.reference) ?? 0]);
  expect(notOnce.slice(0, 5)).toEqual([]);
  expect(state.failed.size).toBe(p.events.filter((e) => e.failFirst).length);
}

describe('the ledger under a load of 10,000 deliveries with copies', () => {
  describe('memory store', () => {
    it(
      'keeps one record per attempt, and answers for a reference',
      async () => {
        const p = plan(SEED, tag());
        const state = runState();
        const store = memoryStore({ ledger: LEDGER });
        await loadRun('memory', p, [loadReceiver(store, p, state)], store.ledger!, state);
      },
      TIMEOUT,
    );
  });

  describe.skipIf(!redisUrl)('redis store, two receivers', () => {
    const prefix = `payhook-ledger-load-${tag()}:`;
    let stores: ReturnType<typeof redisStore>[] = [];
    afterAll(async () => {
      if (stores.length === 0) return;
      await Promise.all(stores.map((s) => s.close()));
      const redis = new Redis(redisUrl!);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    });

    it(
      'keeps one record per attempt, and answers for a reference',
      async () => {
        const p = plan(SEED, tag());
        const state = runState();
        stores = [0, 1].map(() => redisStore({ url: redisUrl!, prefix, ledger: LEDGER, checkDurability: false }));
        const receivers = stores.map((s) => loadReceiver(s, p, state));
        await loadRun('redis', p, receivers, stores[0]!.ledger!, state);
      },
      TIMEOUT,
    );
  });

  describe.skipIf(!pgUrl)('postgres store, two receivers', () => {
    const table = `ledger_load_${tag()}`;
    let stores: ReturnType<typeof postgresStore>[] = [];
    // biome-ignore lint/suspicious/noDuplicateTestHooks: the hook of another describe (describe.skipIf is one Biome does not see)
    afterAll(async () => {
      if (stores.length === 0) return;
      await Promise.all(stores.map((s) => s.close()));
      const admin = new pg.Client({ connectionString: pgUrl! });
      await admin.connect();
      try {
        await admin.query(`drop table if exists ${table}, ${table}_ledger`);
      } finally {
        await admin.end();
      }
    });

    it(
      'keeps one record per attempt, and answers for a reference',
      async () => {
        const p = plan(SEED, tag());
        const state = runState();
        stores = [0, 1].map(() => postgresStore({ connectionString: pgUrl!, table, ledger: LEDGER }));
        // Both tables before the clock starts, as a deployment creates them at boot.
        for (const s of stores) await s.createTable();
        const receivers = stores.map((s) => loadReceiver(s, p, state));
        await loadRun('postgres', p, receivers, stores[1]!.ledger!, state);
      },
      TIMEOUT,
    );
  });
});
