import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { queuedKey } from '@payhook/core/queue';
import type { Delivery } from '@payhook/reference';
import { postgresStore, type PostgresStore } from '@payhook/store-postgres';
import { startChild, type ChildReceiver } from '@payhook/test-support/children';
import { countPg, effectsTable } from '@payhook/test-support/effects';
import { merchants, SECRET, start, type Started } from '@payhook/test-support/apps/reference-service';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import { tcpProxy, type TcpProxy } from '@payhook/test-support/servers/tcp-proxy';
import { ENGINES, engineView, queueEnv, runNames, WEB, WORKER, type EngineView } from './helpers.js';
import { until } from '@payhook/test-support/wait';

/** The web processes' lease and budget: A is killed well within its budget (so it never answers), and B's 409 comes well within A's lease. */
const LEASE_MS = 3_000;
const BUDGET_MS = 2_000;
const MINUTE = 60_000;

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();

/** `status outcome` of an attempt, from the receiver's JSON answer; `network` when none came. */
const answerOf = (d: Delivery, i: number): string => {
  const a = d.attempts[i];
  if (!a) return 'none';
  if (a.status === null) return 'network';
  let outcome = '';
  try {
    outcome = (JSON.parse(a.responseBody ?? '') as { outcome?: string }).outcome ?? '';
  } catch {}
  return `${a.status} ${outcome}`;
};

/**
 * The reference service delivers a payment.success to web process A (through a proxy, its
 * callback URL), which claims the event's queued key and is killed -9 before it enqueues. The
 * service's own retries, on its schedule (its clock advanced), reach web process B on the same
 * store and queue: 409 while A's lease holds, 200 queued once it lapsed; a resent copy is 200
 * duplicate. The engine holds one job for the event, and a worker runs its effect once.
 */
describe.each(ENGINES)('kill -9 of a web process between claim and enqueue on %s', (engine) => {
  const available = Boolean(pgUrl && (engine === 'pg-boss' || redisUrl));
  const names = runNames('kweb', engine);
  const env = {
    ...queueEnv(engine, { queue: names.queue, table: names.table, pgUrl: pgUrl ?? '', redisUrl }),
    CHILD_SECRET: SECRET,
    CHILD_LEASE_MS: String(LEASE_MS),
    CHILD_BUDGET_MS: String(BUDGET_MS),
  };
  const children: ChildReceiver[] = [];
  let ref: Started;
  let proxy: TcpProxy;
  let pool: pg.Pool;
  let store: PostgresStore;
  let view: EngineView;

  beforeAll(async () => {
    if (!available) return;
    await (await effectsTable(pgUrl!)).end();
    pool = new pg.Pool({ connectionString: pgUrl!, max: 2, idleTimeoutMillis: 0 });
    store = postgresStore({ pool, table: names.table });
    await store.createTable();
    view = engineView(engine, names.queue, () => pool, redisUrl);
    // Its target is set to web process A, then B, once they run.
    proxy = await tcpProxy({ host: '127.0.0.1', port: 0 });
    ref = await start({ allowHttpCallbacks: true, merchants: merchants(`http://127.0.0.1:${proxy.port}/webhooks`) });
  }, 30_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => c.kill9()));
    if (!available) return;
    await ref?.close();
    ref?.service.close();
    await proxy?.close();
    await view?.cleanup();
    await pool?.query(`drop table if exists ${names.table}`).catch(() => {});
    await pool?.end();
  });

  it.skipIf(!available)(
    "the service's retry queues the event once after the lease of the killed web process lapses",
    async () => {
      const t0 = performance.now();
      const reference = await ref.initialize({ merchantReference: `${names.run}-order` });
      // A hangs after claiming this event's queued key, before the enqueue; B is an ordinary web process.
      const [a, b, worker] = await Promise.all([
        startChild(WEB, { ...env, CHILD_HANG_AT: 'before-enqueue', CHILD_HANG_REF: reference }),
        startChild(WEB, env),
        startChild(WORKER, {
          ...env,
          CHILD_RUN: names.run,
          CHILD_EFFECT: 'transactional',
          CHILD_HANDLER_MS: '50',
          CHILD_LEASE_MS: '1500',
          CHILD_STALL_MS: '1000',
        }),
      ]);
      children.push(a, b, worker);
      proxy.retarget(a.port);

      // The customer pays: the service sends payment.success to A, which claims and hangs.
      expect((await ref.call('POST', `/_sandbox/transactions/${reference}/pay`)).status).toBe(200);
      await a.reached('before-enqueue');
      await a.kill9();
      proxy.retarget(b.port);

      const deliveries = ref.service.deliveries({ reference });
      expect(deliveries.map((d) => d.event)).toEqual(['payment.success']);
      const delivery = deliveries[0]!;
      const event = JSON.parse(delivery.body) as { mode: string; reference: string; event: string };
      const key = `${event.mode}:${event.reference}:${event.event}`;
      const queued = queuedKey(key);
      // The service's first attempt lost its connection with A: no answer, a retry in a minute.
      await until(() => delivery.attempts.length === 1, {
        timeoutMs: 10_000,
        intervalMs: 200,
        what: () => `attempts ${JSON.stringify(delivery.attempts)}`,
      });
      expect(answerOf(delivery, 0)).toBe('network');
      expect(delivery.state).toBe('retrying');
      // A died holding the claim, before anything was enqueued.
      expect(await store.get(queued)).toMatchObject({ state: 'claimed', attempt: 1 });
      expect(await view.jobsFor(key)).toBe(0);

      // +1 minute of the service's time (real time: A's lease still holds): B answers 409.
      await ref.service.clock.advance(MINUTE);
      await until(() => delivery.attempts.length === 2, {
        timeoutMs: 10_000,
        intervalMs: 200,
        what: () => `attempts ${JSON.stringify(delivery.attempts)}`,
      });
      expect(answerOf(delivery, 1)).toBe('409 in-progress');
      expect(delivery.state).toBe('retrying');
      expect(await view.jobsFor(key)).toBe(0);

      // A's lease lapses on Postgres's clock (the store then reads the claim as released).
      await until(async () => (await store.get(queued))?.state === 'released', {
        timeoutMs: 3 * LEASE_MS,
        intervalMs: 200,
        what: async () => `queued key ${JSON.stringify(await store.get(queued))}`,
      });
      // +2 minutes: the service's next retry; B takes the claim over and enqueues.
      await ref.service.clock.advance(2 * MINUTE);
      await until(() => delivery.attempts.length === 3, {
        timeoutMs: 10_000,
        intervalMs: 200,
        what: () => `attempts ${JSON.stringify(delivery.attempts)}\n${b.stderr()}`,
      });
      expect(answerOf(delivery, 2), b.stderr()).toBe('200 queued');
      expect(delivery.state).toBe('delivered');
      expect(await store.get(queued)).toMatchObject({ state: 'done', attempt: 2 });

      // A further copy of the delivery (the service's resend): already queued.
      const resent = await ref.call('POST', `/_sandbox/deliveries/${delivery.id}/resend`);
      expect(resent.status).toBe(201);
      const copy = ref.service.deliveries({ reference }).find((d) => d.resendOf === delivery.id)!;
      await ref.service.clock.advance(0);
      await until(() => copy.attempts.length === 1, {
        timeoutMs: 10_000,
        intervalMs: 200,
        what: () => `attempts ${JSON.stringify(copy.attempts)}`,
      });
      expect(answerOf(copy, 0)).toBe('200 duplicate');
      expect(copy.state).toBe('delivered');

      // The worker runs the event: its transactional effect commits with the event's done record.
      await until(async () => (await store.get(key))?.state === 'done', {
        timeoutMs: 20_000,
        intervalMs: 200,
        what: async () => `event key ${JSON.stringify(await store.get(key))}\n${worker.stderr()}`,
      });
      await until(async () => (await view.unfinished()) === 0, {
        timeoutMs: 20_000,
        intervalMs: 200,
        what: async () => `jobs ${JSON.stringify(await view.states())}`,
      });
      // The rest of the service's schedule: nothing more is sent.
      await ref.service.clock.advance(15 * MINUTE);
      expect(ref.service.deliveries({ reference }).map((d) => `${d.state} ${d.attempts.length}`)).toEqual(['delivered 3', 'delivered 1']);

      expect((await countPg(pool, names.run)).get(reference)).toBe(1);
      expect(await store.get(key)).toMatchObject({ state: 'done', outcome: 'ok', attempt: 1 });
      expect(await view.jobsFor(key)).toBe(1);
      const states = await view.states();
      expect(states.completed).toBe(1);
      expect(await view.deadLetters()).toBe(0);
      // BullMQ keeps one job per id whatever happens; its event stream shows whether a second enqueue was tried.
      const added = await view.addEvents?.(key);
      if (added) expect(added).toEqual({ added: 1, duplicated: 0 });
      console.log(
        `[kill-web ${engine}] answers ${[0, 1, 2].map((i) => answerOf(delivery, i)).join(', ')}; resent copy ${answerOf(copy, 0)}; ` +
          `jobs ${JSON.stringify(states)}${added ? `, stream ${JSON.stringify(added)}` : ''}; effects 1; ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
    },
    60_000,
  );
});
