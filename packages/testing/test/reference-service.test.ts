import express from 'express';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createReceiver, createReconciler, memoryStore, type DeliveryReport, type Receiver } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { payhookExpress } from '@payhook/express';
import { payhookHono } from '@payhook/hono';
import {
  connect,
  manualClock,
  payhookMatchers,
  recordRuns,
  startReferenceService,
  type ManualClock,
  type TestReferenceService,
} from '@payhook/testing';

expect.extend(payhookMatchers);

const quiet = { info() {}, warn() {}, error() {} };
const MINUTE = 60_000;
interface ShopOptions {
  budgetMs?: number;
  fail?: number;
  verify?: boolean;
  /** The receiver's clock; `delayMs` is measured on it. */
  clock?: ManualClock;
  /** How long each run takes, in virtual ms of `clock`. */
  delayMs?: number;
  /** Hold the first run until this many copies were refused as in progress (409), so they overlap it. */
  holdUntilRefused?: number;
}

/** A merchant app on Express whose receiver uses the service's secret; every run is recorded. */
function shopFor(ref: TestReferenceService, options: ShopOptions = {}) {
  const runs = recordRuns();
  const effects: string[] = [];
  let failures = options.fail ?? 0;
  let started!: () => void;
  /** Resolves once a handler run has started (the budget's deadline is set by then). */
  const running = new Promise<void>((r) => (started = r));
  let refused = 0;
  let release!: () => void;
  const othersRefused = new Promise<void>((r) => (release = r));
  const info = (r: DeliveryReport) => void (r.outcome === 'in-progress' && ++refused === options.holdUntilRefused && release());
  const { clock } = options;
  const receiver: Receiver = createReceiver({
    secret: ref.webhookSecret,
    store: memoryStore({ now: clock?.now }),
    logger: { ...quiet, info },
    budgetMs: options.budgetMs,
    // Copies held back by holdUntilRefused must be refused (409) while the first runs, not wait for it.
    onInProgress: options.holdUntilRefused ? 'retry' : 'wait',
    client: ref.client,
    clock,
  }).onAny(
    runs.track(async (event) => {
      started();
      if (options.holdUntilRefused) await othersRefused;
      if (options.delayMs) await clock!.sleep(options.delayMs);
      if (failures-- > 0) throw new Error('the database is down');
      effects.push(event.event);
    }),
    { verify: options.verify },
  );
  const app = express();
  app.all('/webhooks', payhookExpress(receiver));
  return { app, receiver, runs, effects, running };
}

describe('startReferenceService', () => {
  it('five duplicate deliveries of a payment give one effect', async () => {
    await using ref = await startReferenceService();
    const shop = shopFor(ref, { holdUntilRefused: 4 });
    await ref.deliverTo(shop.app);
    const { reference } = await ref.createTransaction();
    await ref.addFault({ type: 'duplicate', times: 4, reference });
    await ref.pay(reference);
    await ref.runRetrySchedule(); // copies refused with 409 while the first ran are retried a minute later

    const deliveries = ref.deliveries({ reference });
    expect(deliveries).toHaveLength(5);
    expect(deliveries.filter((d) => d.duplicateOf !== null)).toHaveLength(4);
    expect(deliveries).toHaveBeenDelivered();
    expect(shop.effects).toEqual(['payment.success']);
    await expect(shop).toHaveProcessedExactlyOnce(reference, 'payment.success');
  });

  it('a receiver that fails the first 4 attempts is processed on the 5th', async () => {
    await using ref = await startReferenceService();
    const shop = shopFor(ref, { fail: 4 });
    await ref.deliverTo(shop.app);
    const { reference } = await ref.createTransaction();
    const started = ref.clock.now();
    await ref.pay(reference);
    expect(ref.deliveries({ reference })[0]).toMatchObject({ state: 'retrying', attempts: [{ status: 500 }] });

    await ref.runRetrySchedule();
    const [delivery] = ref.deliveries({ reference });
    expect(delivery!.attempts.map((a) => [Date.parse(a.at) - started, a.status])).toEqual([
      [0, 500],
      [1 * MINUTE, 500],
      [3 * MINUTE, 500],
      [7 * MINUTE, 500],
      [15 * MINUTE, 200],
    ]);
    expect(delivery).toHaveBeenDelivered();
    expect(shop.runs.of(reference).map((r) => r.result)).toEqual(['threw', 'threw', 'threw', 'threw', 'ok']);
    await expect(shop).toHaveProcessedExactlyOnce(reference, 'payment.success');
  });

  it('injected failures (the fail fault) are retried the same way', async () => {
    await using ref = await startReferenceService();
    const shop = shopFor(ref);
    await ref.deliverTo(shop.app);
    const { reference } = await ref.createTransaction();
    await ref.addFault({ type: 'fail', count: 4, reference });
    expect(await ref.faults()).toHaveLength(1);
    await ref.pay(reference);
    await ref.runRetrySchedule();
    expect(ref.deliveries({ reference })[0]!.attempts.map((a) => a.status)).toEqual([null, null, null, null, 200]);
    expect(await ref.faults()).toEqual([]);
    expect(shop.effects).toEqual(['payment.success']);
  });

  it('a slow handler gets 202 from the receiver, and the service counts it delivered', async () => {
    await using ref = await startReferenceService();
    const clock = manualClock();
    const shop = shopFor(ref, { budgetMs: 50, clock, delayMs: 300 });
    await ref.deliverTo(shop.app);
    const { reference } = await ref.createTransaction();
    const paid = ref.pay(reference);
    await shop.running;
    await clock.advance(50); // the receiver's budget runs out: 202
    await paid;
    expect(ref.deliveries({ reference })[0]).toMatchObject({ state: 'delivered', attempts: [{ status: 202 }] });
    await expect(shop).not.toHaveProcessedExactlyOnce(reference, 'payment.success'); // still running
    await clock.advance(250); // the handler ends at 300
    await shop.runs.settled();
    await expect(shop).toHaveProcessedExactlyOnce(reference, 'payment.success');
  });

  it('reordered by the service, a refund runs before its payment: payhook does not reorder', async () => {
    await using ref = await startReferenceService();
    const shop = shopFor(ref);
    await ref.deliverTo(shop.app);
    const { reference } = await ref.createTransaction();
    await ref.addFault({ type: 'reorder', count: 2, reference });
    await ref.pay(reference); // held until the second delivery exists
    expect(shop.effects).toEqual([]);
    await ref.refund(reference);
    expect(ref.deliveries({ reference }).map((d) => [d.event, d.state])).toEqual([
      ['payment.success', 'delivered'],
      ['payment.refunding', 'delivered'],
    ]);
    expect(shop.effects).toEqual(['payment.refunding', 'payment.success']);
    await expect(shop).toHaveProcessedExactlyOnce(reference, 'payment.refunding');
    await expect(shop).toHaveProcessedExactlyOnce(reference, 'payment.success');
  });

  it('with { verify: true }, a payment that arrives after its refund still runs once: the service says refunding, which agrees', async () => {
    await using ref = await startReferenceService();
    const shop = shopFor(ref, { verify: true });
    await ref.deliverTo(shop.app);
    const { reference } = await ref.createTransaction();
    await ref.addFault({ type: 'reorder', count: 2, reference });
    await ref.pay(reference);
    await ref.refund(reference);
    // Verify said "refunding, not completed" for the late payment; the record it then retrieved
    // (refunding) agrees with a success, so its handler ran after the refund's.
    expect(shop.effects).toEqual(['payment.refunding', 'payment.success']);
    expect(ref.deliveries({ reference }).every((d) => d.state === 'delivered')).toBe(true);
    await expect(shop).toHaveProcessedExactlyOnce(reference, 'payment.success');

    const reconciler = createReconciler({ client: ref.client, receiver: shop.receiver });
    const now = ref.clock.now();
    const run = await reconciler.run({ from: new Date(now - 60 * MINUTE), to: new Date(now) });
    expect(run.recovered).toEqual([]);
    expect(shop.effects).toEqual(['payment.refunding', 'payment.success']);
  });

  it('moves transactions through their whole life with typed helpers', async () => {
    await using ref = await startReferenceService();
    const shop = shopFor(ref);
    await ref.deliverTo(shop.app);
    const a = await ref.createTransaction({ amount: '250.00', merchantReference: 'order-life' });
    expect(a.merchantReference).toBe('order-life');
    expect(await ref.open(a.reference)).toMatchObject({ status: 'processing' });
    expect(await ref.pay(a.reference, { paymentMethod: 'mpesa' })).toMatchObject({ status: 'completed', paymentMethod: 'mpesa' });
    expect(await ref.refund(a.reference)).toMatchObject({ status: 'refunding' });
    expect(await ref.completeRefund(a.reference)).toMatchObject({ status: 'refunded' });
    const b = await ref.createTransaction();
    expect(await ref.fail(b.reference)).toMatchObject({ status: 'failed', paidAt: null });
    const c = await ref.createTransaction();
    expect(await ref.cancel(c.reference)).toMatchObject({ status: 'cancelled' });
    const d = await ref.createTransaction();
    await ref.pay(d.reference);
    expect(await ref.reverse(d.reference)).toMatchObject({ status: 'reversed' });
    expect(shop.effects).toEqual([
      'payment.success',
      'payment.refunding',
      'payment.refunded',
      'payment.failed',
      'payment.cancelled',
      'payment.success',
      'payment.reversed',
    ]);
    expect(ref.deliveries({ event: 'payment.success' })).toHaveLength(2);
    expect(ref.deliveries()).toHaveBeenDelivered();
    expect((await ref.client.transactions.retrieve(a.reference)).status).toBe('refunded');
    await expect(ref.pay(a.reference)).rejects.toThrow(
      /^\[@payhook\/testing\] POST \/_sandbox\/transactions\/.*\/pay failed \(400\): Cannot pay/,
    );
  });

  it('relays to any target and can switch targets; without one the service records 503s', async () => {
    await using ref = await startReferenceService();
    const { reference: first } = await ref.createTransaction();
    await ref.pay(first);
    expect(ref.deliveries({ reference: first })[0]).toMatchObject({ state: 'retrying', attempts: [{ status: 503 }] });

    const hono = shopFor(ref);
    const honoReceiver = hono.receiver;
    const app = new Hono();
    app.all('/hooks/payhook', payhookHono(honoReceiver));
    await ref.deliverTo(app, { path: '/hooks/payhook' });
    await ref.runRetrySchedule();
    expect(ref.deliveries({ reference: first })[0]).toMatchObject({ state: 'delivered' });
    expect(hono.effects).toEqual(['payment.success']);

    const node = shopFor(ref);
    await ref.deliverTo(toNodeListener(node.receiver));
    const { reference: second } = await ref.createTransaction();
    await ref.pay(second);
    expect(node.effects).toEqual(['payment.success']);
    expect(hono.effects).toEqual(['payment.success']);
  });

  it('runs in process without a port when asked, and closes everything it opened', async () => {
    const ref = await startReferenceService({ listen: false });
    const shop = shopFor(ref);
    await ref.deliverTo(shop.app);
    const { reference } = await ref.createTransaction();
    await ref.pay(reference);
    expect(shop.effects).toEqual(['payment.success']);
    const clock = await ref.fetch('/_sandbox/clock');
    expect(await clock.json()).toEqual({ now: new Date(ref.clock.now()).toISOString() });
    const callback = ref.callbackUrl;
    await ref.close();
    await expect(fetch(callback, { method: 'POST' })).rejects.toThrow();
  });

  it('listens on a free port by default; close() stops it', async () => {
    const ref = await startReferenceService({ startAt: Date.parse('2031-01-01T00:00:00.000Z') });
    expect(ref.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ref.env).toEqual({ PAYHOOK_BASE_URL: ref.url, PAYHOOK_API_KEY: ref.apiKey, PAYHOOK_WEBHOOK_SECRET: ref.webhookSecret });
    const res = await fetch(`${ref.url}/_sandbox/clock`, { headers: { authorization: `Bearer ${ref.apiKey}` } });
    expect(await res.json()).toEqual({ now: '2031-01-01T00:00:00.000Z' });
    await ref.close();
    await expect(fetch(`${ref.url}/_sandbox/clock`)).rejects.toThrow();
  });

  it('connect() reaches an app’s other routes the way deliver does', async () => {
    const app = express();
    app.get('/orders/:id', (req, res) => void res.json({ id: req.params.id }));
    app.post('/echo', express.json(), (req, res) => void res.status(201).json(req.body));
    await using conn = await connect(app);
    expect(conn.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await conn.fetch('/orders/o-1')).json()).toEqual({ id: 'o-1' });
    const echoed = await conn.fetch('/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect([echoed.status, await echoed.json()]).toEqual([201, { a: 1 }]);
  });
});
