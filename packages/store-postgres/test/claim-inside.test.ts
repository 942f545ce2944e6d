import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createReceiver, NonRetriableError, type DeliveryReport } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';
import { createEvent, signedRequest } from '@payhook/testing';
import { requirePostgres } from '@payhook/test-support/services';
import { statementsSent } from './statements-sent.js';
import { until } from '@payhook/test-support/wait';

const url = await requirePostgres();
const SECRET = 'whsec_inside';

/** A promise a test opens by hand: an effect waits on it while the test looks at what others see. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe.skipIf(!url)('postgres: transactional({ claim: "inside" }), the claim in the effect\'s own commit', () => {
  const table = `payhook_inside_${randomUUID().slice(0, 8)}`;
  const effects = `${table}_effects`;
  const pool = new pg.Pool({ connectionString: url! });
  const store = postgresStore({ pool, table, purge: false });
  // Statements the store sends on its pool outside a transaction: claims, completes, releases, extends.
  const sent = statementsSent(pool);
  // The test's own reads, on a pool of their own: not among the store's statements.
  const admin = new pg.Pool({ connectionString: url!, max: 2 });
  const query = admin.query.bind(admin);
  const gates = new Map<string, ReturnType<typeof gate>>();
  const entered = new Set<string>();
  const effect = store.transactional(
    async (event, ctx, client) => {
      entered.add(event.reference);
      await gates.get(event.reference)?.opened;
      await client.query(`insert into ${effects} (key, attempt) values ($1, $2)`, [ctx.dedupeKey, ctx.attempt]);
      if (event.merchantReference === 'throw') throw new Error('the effect failed');
      if (event.merchantReference === 'refuse') throw new NonRetriableError('not ours');
    },
    { claim: 'inside' },
  );
  const errors: DeliveryReport[] = [];
  const receiver = (budgetMs?: number) =>
    createReceiver({ secret: SECRET, store, budgetMs, logger: { error: (r: DeliveryReport) => errors.push(r), warn() {} } }).on(
      'payment.success',
      effect,
    );
  const main = receiver();
  const deliver = async (r: ReturnType<typeof receiver>, event: ReturnType<typeof createEvent>) => {
    const res = await r.handle(signedRequest(event, { secret: SECRET }));
    return { status: res.status, outcome: ((await res.json()) as { outcome: string }).outcome };
  };
  const keyOf = (event: ReturnType<typeof createEvent>) => `${event.mode}:${event.reference}:${event.event}`;
  const effectRows = async (key: string) =>
    (await query<{ attempt: number }>(`select attempt from ${effects} where key = $1`, [key])).rows.map((r) => r.attempt);

  beforeAll(async () => {
    await store.createTable();
    await query(`create table ${effects} (key text, attempt int)`);
  });
  afterAll(async () => {
    await store.close();
    sent.restore();
    await query(`drop table if exists ${table}, ${effects}`);
    await Promise.all([pool.end(), admin.end()]);
  });

  it('claims, runs and records a new event in one transaction, with no statement of its own', async () => {
    const event = createEvent('payment.success');
    sent.texts.length = 0;
    expect(await deliver(main, event)).toEqual({ status: 200, outcome: 'processed' });
    expect(sent.texts, 'statements outside the transaction').toEqual([]);
    expect(await effectRows(keyOf(event))).toEqual([1]);
    expect(await store.get(keyOf(event))).toMatchObject({ state: 'done', outcome: 'ok', attempt: 1 });
    expect(await deliver(main, event)).toEqual({ status: 200, outcome: 'duplicate' });
    expect(await effectRows(keyOf(event))).toEqual([1]);
  });

  it('keeps a copy waiting on the row until the first commits, then answers it duplicate', async () => {
    const event = createEvent('payment.success');
    const g = gate();
    gates.set(event.reference, g);
    const first = deliver(main, event);
    await until(() => entered.has(event.reference), { timeoutMs: 5_000, what: 'the first delivery in its effect' });
    const copy = deliver(receiver(), event);
    // The copy's claim waits on the first's uncommitted row: Postgres shows it waiting for a lock.
    await until(
      async () => (await query(`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%${table}%'`)).rowCount === 1,
      { timeoutMs: 5_000, what: "the copy's claim waiting on the row" },
    );
    g.open();
    expect(await first).toEqual({ status: 200, outcome: 'processed' });
    expect(await copy).toEqual({ status: 200, outcome: 'duplicate' });
    expect(await effectRows(keyOf(event))).toEqual([1]);
  });

  it('rolls the claim back with an effect that throws: the retry runs it as the first attempt', async () => {
    const event = createEvent('payment.success', { merchantReference: 'throw' });
    expect(await deliver(main, event)).toEqual({ status: 500, outcome: 'failed' });
    expect(await store.get(keyOf(event))).toBeUndefined();
    expect(await effectRows(keyOf(event))).toEqual([]);
    expect((await deliver(main, event)).status).toBe(500);
    expect(await store.get(keyOf(event))).toBeUndefined();
  });

  it('records a NonRetriableError as rejected, under a claim of its own', async () => {
    const event = createEvent('payment.success', { merchantReference: 'refuse' });
    expect(await deliver(main, event)).toEqual({ status: 200, outcome: 'rejected' });
    expect(await store.get(keyOf(event))).toMatchObject({ state: 'done', outcome: 'rejected' });
    expect(await effectRows(keyOf(event))).toEqual([]);
    expect(await deliver(main, event)).toEqual({ status: 200, outcome: 'duplicate' });
  });

  it('takes over a lapsed claim as the next attempt, and waits for a live one to end before running fenced on a claim of its own', async () => {
    const lapsed = createEvent('payment.success');
    const held = await store.claim(keyOf(lapsed), 1);
    await until(async () => (await store.get(keyOf(lapsed)))?.state === 'released', { timeoutMs: 2_000, what: 'the 1 ms lease to lapse' });
    expect(held.status).toBe('claimed');
    expect(await deliver(main, lapsed)).toEqual({ status: 200, outcome: 'processed' });
    expect(await effectRows(keyOf(lapsed))).toEqual([2]);

    const live = createEvent('payment.success');
    const other = await store.claim(keyOf(live), 30_000);
    if (other.status !== 'claimed') throw new Error('expected a claim');
    sent.texts.length = 0;
    const waiting = deliver(receiver(), live);
    // The key was not free: the ordinary claim said who holds it, and the copy waits.
    await until(() => sent.texts.some((t) => t.includes('WITH cur AS')), { timeoutMs: 5_000, what: "the copy's ordinary claim" });
    expect(await store.release(keyOf(live), other.token)).toBe(true);
    // Told of the release, the copy claims it the ordinary way and runs the handler fenced on that claim.
    expect(await waiting).toEqual({ status: 200, outcome: 'processed' });
    expect(await effectRows(keyOf(live))).toEqual([2]);
  });

  it('answers 202 at the budget and commits after, with no lease to extend', async () => {
    const event = createEvent('payment.success');
    const g = gate();
    gates.set(event.reference, g);
    sent.texts.length = 0;
    errors.length = 0;
    const quick = receiver(200);
    expect(await deliver(quick, event)).toEqual({ status: 202, outcome: 'accepted' });
    g.open();
    await until(async () => (await store.get(keyOf(event)))?.state === 'done', { timeoutMs: 5_000, what: 'the late commit' });
    expect(await effectRows(keyOf(event))).toEqual([1]);
    expect(
      sent.texts.filter((t) => t.includes('greatest(expires_at')),
      'extends',
    ).toEqual([]);
    expect(errors).toEqual([]);
  });
});
