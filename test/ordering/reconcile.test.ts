import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@payhook/client';
import { createReceiver, createReconciler, memoryStore, type DeliveryReport, type PaymentEvent, type Receiver } from '@payhook/core';
import { eventFromRecord, paymentEventSchema } from '@payhook/core/lifecycle';
import { toNodeListener } from '@payhook/core/node';
import { manualClock, type ManualClock } from '@payhook/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { merchants, SANDBOX_KEY, SECRET, start, validInput, type Started } from '@payhook/test-support/apps/reference-service';

const MINUTE = 60_000;
const quiet = { info() {}, warn() {}, error() {} };

interface Harness {
  ref: Started;
  receiver: Receiver;
  /** The receiver's and its store's clock (the service has its own): budgets and leases move with it. */
  clock: ManualClock;
  /** Effects that completed, as `reference event`. */
  effects: string[];
  /** Answer 503 at the door, as if the app were down. */
  setDown(down: boolean): void;
  initializePaid(action?: string[]): Promise<string>;
  reconcile(): ReturnType<ReturnType<typeof createReconciler>['run']>;
  close(): Promise<void>;
}

const open: Harness[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.close()));
});

/** A merchant app (core receiver on a real socket) and the reference service delivering to it. */
async function harness(
  configure: (receiver: Receiver, effects: string[], clock: ManualClock) => void = defaultHandlers,
  options: { budgetMs?: number } = {},
) {
  const effects: string[] = [];
  const clock = manualClock();
  const receiver = createReceiver({
    secret: SECRET,
    store: memoryStore({ now: clock.now }),
    logger: quiet,
    budgetMs: options.budgetMs,
    clock,
  });
  configure(receiver, effects, clock);
  let down = false;
  const listener = toNodeListener(receiver);
  const app = http.createServer((req, res) => (down ? res.writeHead(503).end() : listener(req, res)));
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
  const callbackUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/webhooks`;
  const ref = await start({ allowHttpCallbacks: true, merchants: merchants(callbackUrl) });
  const client = createClient({ apiKey: SANDBOX_KEY, baseUrl: ref.url, priority: 'background' });
  const reconciler = createReconciler({ client, receiver });
  const h: Harness = {
    ref,
    receiver,
    clock,
    effects,
    setDown: (d) => void (down = d),
    async initializePaid(actions = ['pay']) {
      const { json } = await ref.call('POST', '/v1/transactions/initialize', { body: validInput() });
      const reference = json.reference as string;
      for (const action of actions) {
        const moved = await ref.call('POST', `/_sandbox/transactions/${reference}/${action}`);
        expect(moved.status).toBe(200);
      }
      return reference;
    },
    reconcile: () => reconciler.run({ from: new Date(ref.service.clock.now() - 60 * MINUTE), to: new Date(ref.service.clock.now()) }),
    async close() {
      await ref.close();
      app.closeAllConnections();
      await new Promise((r) => app.close(r));
    },
  };
  open.push(h);
  return h;
}

function defaultHandlers(receiver: Receiver, effects: string[]) {
  receiver.onAny((event) => void effects.push(`${event.reference} ${event.event}`));
}

const count = (effects: string[], entry: string) => effects.filter((e) => e === entry).length;

describe('reconcile through verify and list', () => {
  it('recovers dropped deliveries, each exactly once, as the webhook would have carried them, and a second run recovers nothing', async () => {
    const seen: PaymentEvent[] = [];
    const h = await harness((receiver, effects) => {
      receiver.onAny((event) => {
        seen.push(event);
        effects.push(`${event.reference} ${event.event}`);
      });
    });
    await h.ref.call('POST', '/_sandbox/faults', { body: { type: 'drop', count: 3 } });
    const refs = [await h.initializePaid(), await h.initializePaid(), await h.initializePaid()];
    await h.ref.service.clock.advance(30 * MINUTE);
    expect(h.effects).toEqual([]);
    expect(h.ref.service.deliveries().map((d) => d.state)).toEqual(['dropped', 'dropped', 'dropped']);

    const first = await h.reconcile();
    expect(first.scanned).toBe(3);
    expect(first.recovered.map((r) => r.reference).sort()).toEqual([...refs].sort());
    for (const r of refs) expect(count(h.effects, `${r} payment.success`)).toBe(1);
    for (const event of seen) {
      expect(paymentEventSchema.safeParse(event).success).toBe(true);
      expect(event).toMatchObject({ mode: 'sandbox', currency: 'ETB', amount: '100.00', status: 'completed' });
      expect(event).not.toHaveProperty('currencyCode');
    }

    const second = await h.reconcile();
    expect(second.recovered).toEqual([]);
    expect(h.effects).toHaveLength(3);
  });

  it('start(), given nothing but everyMs (as the README shows it), recovers a dropped delivery on its first tick', async () => {
    const h = await harness();
    await h.ref.call('POST', '/_sandbox/faults', { body: { type: 'drop', count: 1 } });
    const reference = await h.initializePaid();
    await h.ref.service.clock.advance(30 * MINUTE);
    expect(h.effects).toEqual([]);
    const client = createClient({ apiKey: SANDBOX_KEY, baseUrl: h.ref.url, priority: 'background' });
    // The receiver's clock started a moment before the service's: move it past the transaction's creation.
    await h.clock.advance(MINUTE);
    const stop = createReconciler({ client, receiver: h.receiver, clock: h.clock }).start({ everyMs: 5 * MINUTE });
    try {
      // The run goes over real HTTP to the reference service: wait for it, not for a clock.
      await vi.waitFor(() => expect(count(h.effects, `${reference} payment.success`)).toBe(1), { timeout: 10_000 });
    } finally {
      stop();
    }
  });

  it('recovers a delivery the service gave up on after the receiver was down for the whole schedule', async () => {
    const h = await harness();
    h.setDown(true);
    const reference = await h.initializePaid();
    await h.ref.service.clock.advance(20 * MINUTE);
    const [delivery] = h.ref.service.deliveries({ reference });
    expect(delivery).toMatchObject({ state: 'failed' });
    expect(delivery!.attempts).toHaveLength(5);
    expect(h.effects).toEqual([]);

    h.setDown(false);
    expect((await h.reconcile()).recovered).toHaveLength(1);
    expect((await h.reconcile()).recovered).toHaveLength(0);
    expect(h.effects).toEqual([`${reference} payment.success`]);
  });

  it('recovers a handler that failed after its 202', async () => {
    let failures = 0;
    let started!: () => void;
    /** Resolves when the handler's next run starts. */
    const nextRun = () => new Promise<void>((r) => (started = r));
    const firstRun = nextRun();
    const h = await harness(
      (receiver, effects, clock) => {
        receiver.on('payment.success', async (event) => {
          started();
          await clock.sleep(150);
          if (failures++ === 0) throw new Error('the database went away after the 202');
          effects.push(`${event.reference} ${event.event}`);
        });
      },
      { budgetMs: 50 },
    );
    const reference = await h.initializePaid();
    const delivered = h.ref.service.clock.advance(0);
    await firstRun;
    await h.clock.advance(50); // the receiver's budget runs out while the handler runs: 202
    await delivered;
    expect(h.ref.service.deliveries({ reference })[0]!.attempts.map((a) => a.status)).toEqual([202]);
    await h.clock.advance(100); // the handler throws at 150, after its 202
    expect(h.effects).toEqual([]);
    expect(await h.receiver.store.get(`sandbox:${reference}:payment.success`)).toMatchObject({ state: 'released' });

    // The reconcile waits for the handler (no budget): its 150 virtual ms pass while it runs.
    const secondRun = nextRun();
    const run = h.reconcile();
    await secondRun;
    await h.clock.advance(150);
    expect((await run).recovered).toEqual([expect.objectContaining({ reference, outcome: 'processed' })]);
    expect(h.effects).toEqual([`${reference} payment.success`]);
    expect((await h.reconcile()).recovered).toEqual([]);
  });

  it('takes over a claim whose process died once its lease runs out, and runs it once', async () => {
    const h = await harness();
    await h.ref.call('POST', '/_sandbox/faults', { body: { type: 'drop' } });
    const reference = await h.initializePaid();
    await h.ref.service.clock.advance(0);
    // A process claimed the event and died before finishing: its lease is still running.
    const key = `sandbox:${reference}:payment.success`;
    expect((await h.receiver.store.claim(key, 300)).status).toBe('claimed');

    const during = await h.reconcile();
    expect(during.inProgress).toEqual([expect.objectContaining({ reference, outcome: 'in-progress' })]);
    expect(h.effects).toEqual([]);

    await h.clock.advance(299);
    expect((await h.reconcile()).inProgress).toHaveLength(1);
    await h.clock.advance(1); // the dead process's 300 ms lease runs out
    const after = await h.reconcile();
    expect(after.recovered).toEqual([expect.objectContaining({ reference, outcome: 'processed' })]);
    expect(await h.receiver.store.get(key)).toMatchObject({ state: 'done', attempt: 2 });
    expect(h.effects).toEqual([`${reference} payment.success`]);
  });

  it("dispatches a refunded payment's lost events in lifecycle order", async () => {
    const h = await harness();
    await h.ref.call('POST', '/_sandbox/faults', { body: { type: 'drop', count: 3 } });
    const reference = await h.initializePaid(['pay', 'refund', 'complete-refund']);
    await h.ref.service.clock.advance(0);
    expect(h.effects).toEqual([]);
    await h.reconcile();
    expect(h.effects).toEqual([`${reference} payment.success`, `${reference} payment.refunding`, `${reference} payment.refunded`]);
  });

  it('leaves alone what the webhooks already delivered, even with duplicates', async () => {
    const h = await harness();
    await h.ref.call('POST', '/_sandbox/faults', { body: { type: 'duplicate', times: 3 } });
    const reference = await h.initializePaid();
    await h.ref.service.clock.advance(5 * MINUTE);
    expect(h.effects).toEqual([`${reference} payment.success`]);
    expect((await h.reconcile()).recovered).toEqual([]);
    expect(h.effects).toHaveLength(1);
  });
});

describe('verify before the handler', () => {
  it('runs a handler only when the service agrees, and hands it the record', async () => {
    const records: unknown[] = [];
    const h = await harness();
    const ref = h.ref;
    const client = createClient({ apiKey: SANDBOX_KEY, baseUrl: ref.url });
    const reports: string[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      client,
      logger: { info() {}, warn: (r: DeliveryReport) => void reports.push(r.outcome), error() {} },
    }).on('payment.success', (_event, ctx) => void records.push(ctx.record), { verify: true });

    const pending = (await ref.call('POST', '/v1/transactions/initialize', { body: validInput() })).json.reference as string;
    const paid = await h.initializePaid();
    const body = (reference: string): PaymentEvent =>
      eventFromRecord(h.ref.service.transactions().find((t) => t.reference === reference)!, 'payment.success');

    // A validly signed success for a transaction the service says is still pending: its API may lag, so 503 and a retry.
    const early = await receiver.dispatch(body(pending), { source: 'webhook' });
    expect(early).toMatchObject({ outcome: 'verify-unavailable', status: 503 });
    expect(records).toEqual([]);
    expect(await receiver.store.get(`sandbox:${pending}:payment.success`)).toMatchObject({ state: 'released' });
    // Once it was cancelled, no move leads to a success: the service contradicts it, 200 mismatch and nothing runs.
    await ref.call('POST', `/v1/transactions/${pending}/cancel`);
    const forged = await receiver.dispatch(body(pending), { source: 'webhook' });
    expect(forged).toMatchObject({ outcome: 'mismatch', status: 200 });
    expect(records).toEqual([]);

    const real = await receiver.dispatch(body(paid), { source: 'webhook' });
    expect(real).toMatchObject({ outcome: 'processed' });
    expect(records).toEqual([expect.objectContaining({ reference: paid, status: 'completed' })]);
    expect(reports).toEqual(['mismatch']);
  });

  it('answers 503 when the service cannot be asked, so the delivery is retried', async () => {
    const client = createClient({ apiKey: SANDBOX_KEY, baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
    const receiver = createReceiver({ secret: SECRET, client, verifyBeforeHandling: true, logger: quiet }).on('payment.success', () => {
      throw new Error('must not run');
    });
    const ref = await start();
    try {
      const { json } = await ref.call('POST', '/v1/transactions/initialize', { body: validInput() });
      await ref.call('POST', `/_sandbox/transactions/${json.reference}/pay`);
      const event = eventFromRecord(ref.service.transactions()[0]!, 'payment.success');
      expect(await receiver.dispatch(event, { source: 'webhook' })).toMatchObject({ outcome: 'verify-unavailable', status: 503 });
    } finally {
      await ref.close();
    }
  });

  it('refuses { verify: true } without a client, saying what to pass', () => {
    const receiver = createReceiver({ secret: SECRET });
    expect(() => receiver.on('payment.success', () => {}, { verify: true })).toThrow(
      /^\[@payhook\/core\] a handler asked for \{ verify: true \}, but the receiver has no client/,
    );
  });
});
