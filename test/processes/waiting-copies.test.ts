import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createReceiver, type Store } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import { createEvent, signedRequest } from '@payhook/testing';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import { sleep } from '@payhook/test-support/wait';

/**
 * Copies that wait for their running event (`onInProgress: 'wait'`, the default) are told when it
 * is done, by the store's own channel (Postgres `LISTEN`/`NOTIFY`, Redis pub/sub), so a copy costs
 * the same few round trips whatever the handler's length: 500 copies of one event whose handler
 * takes 5 s, on the real servers.
 */
const SECRET = 'whsec_waiting_copies';
const COPIES = 500;
const HANDLER_MS = 5_000;

const [pgUrl, redisUrl] = await Promise.all([requirePostgres(), requireRedis()]);

/** Cuts the store's listening connection, from the server's side. */
type Cut = () => Promise<number>;

function copiesOf(name: string, url: string | undefined, make: () => Store & { close(): Promise<void> }, cut: Cut) {
  describe.skipIf(!url)(`${name}: ${COPIES} copies of a running event`, () => {
    const store = make();
    afterAll(() => store.close());

    it(`are each answered duplicate once it is done, with at most 3 claims per copy (a ${HANDLER_MS / 1000} s handler)`, async () => {
      let claims = 0;
      const counted: Store = { ...store, claim: (key, leaseMs) => (claims++, store.claim(key, leaseMs)) };
      const receiver = createReceiver({ secret: SECRET, store: counted, logger: { warn() {}, error() {} } });
      let runs = 0;
      receiver.on('payment.success', async () => {
        runs += 1;
        // Real time: the copies are told by the server, over another connection, as in production.
        await sleep(HANDLER_MS);
      });
      const event = createEvent('payment.success', { reference: `wait_${randomUUID().slice(0, 8)}` });
      const first = receiver.handle(signedRequest(event, { secret: SECRET }));
      // The copies arrive once the first holds the claim: each finds it running.
      await sleep(200);
      const started = Date.now();
      const copies = await Promise.all(Array.from({ length: COPIES }, () => receiver.handle(signedRequest(event, { secret: SECRET }))));
      const waited = Date.now() - started;
      const answers: Record<string, number> = {};
      for (const r of [await first, ...copies]) {
        const a = `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
        answers[a] = (answers[a] ?? 0) + 1;
      }
      console.info(`[waiting-copies] ${name}: ${claims} claims for ${COPIES} copies and the first; the copies waited ${waited} ms`);
      expect(answers).toEqual({ '200 processed': 1, '200 duplicate': COPIES });
      expect(runs).toBe(1);
      // The first claim, and for each copy: its own, one once its watch is on, one when told.
      expect(claims).toBeLessThanOrEqual(1 + 3 * COPIES);
    }, 30_000);

    it('are still answered duplicate when the listening connection is cut while they wait', async () => {
      const receiver = createReceiver({ secret: SECRET, store, logger: { warn() {}, error() {} } });
      let runs = 0;
      receiver.on('payment.success', async () => {
        runs += 1;
        await sleep(3_000);
      });
      const event = createEvent('payment.success', { reference: `cut_${randomUUID().slice(0, 8)}` });
      const first = receiver.handle(signedRequest(event, { secret: SECRET }));
      await sleep(200);
      const copies = Array.from({ length: 50 }, () => receiver.handle(signedRequest(event, { secret: SECRET })));
      // A second in, the server drops the connection the store listens on.
      await sleep(1_000);
      expect(await cut(), 'listening connections cut').toBeGreaterThanOrEqual(1);
      const answers: Record<string, number> = {};
      for (const r of [await first, ...(await Promise.all(copies))]) {
        const a = `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
        answers[a] = (answers[a] ?? 0) + 1;
      }
      expect(answers).toEqual({ '200 processed': 1, '200 duplicate': 50 });
      expect(runs).toBe(1);
    }, 30_000);
  });
}

const table = `payhook_wait_${randomUUID().slice(0, 8)}`;
copiesOf(
  'postgres',
  pgUrl,
  () => postgresStore({ connectionString: pgUrl!, table, purge: false }),
  async () => {
    const admin = new pg.Client({ connectionString: pgUrl! });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ cut: boolean }>(
        "select pg_terminate_backend(pid) as cut from pg_stat_activity where application_name = 'payhook listener'",
      );
      return rows.filter((r) => r.cut).length;
    } finally {
      await admin.end();
    }
  },
);
const prefix = `payhook-wait-${randomUUID().slice(0, 8)}:`;
copiesOf(
  'redis',
  redisUrl,
  () => redisStore({ url: redisUrl!, prefix, retentionMs: 60_000 }),
  async () => {
    const admin = new Redis(redisUrl!);
    try {
      // Every subscribed connection: this store's, and any other test's, which then looks again too.
      const clients = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
      let cut = 0;
      for (const line of clients.split('\n')) {
        const id = line.match(/^id=(\d+)/)?.[1];
        if (id && /sub=1/.test(line)) cut += Number(await admin.call('CLIENT', 'KILL', 'ID', id));
      }
      return cut;
    } finally {
      admin.disconnect();
    }
  },
);
