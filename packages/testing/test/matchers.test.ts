import { describe, expect, it } from 'vitest';
import { createReceiver, memoryStore, NonRetriableError } from '@payhook/core';
import { createEvent, deliver, payhookMatchers, recordRuns, startReferenceService } from '@payhook/testing';

expect.extend(payhookMatchers);

const secret = 'whsec_matcher_tests';
const quiet = { info() {}, warn() {}, error() {} };

/** The matcher's message when it fails, for asserting what it tells the user. */
async function failure(run: () => Promise<unknown> | unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the assertion to fail');
}

describe('toHaveProcessedExactlyOnce', () => {
  it('passes only once the handlers returned, and says why not otherwise', async () => {
    let mode: 'ok' | 'throw' | 'reject' = 'throw';
    const runs = recordRuns();
    const receiver = createReceiver({ secret, store: memoryStore(), logger: quiet }).on(
      'payment.success',
      runs.track(() => {
        if (mode === 'throw') throw new Error('down');
        if (mode === 'reject') throw new NonRetriableError('no such order');
      }),
    );
    const event = createEvent('payment.success');

    expect(await failure(() => expect(receiver).toHaveProcessedExactlyOnce(event))).toMatch(
      /^expected payment\.success of ref_\S+ to have been processed exactly once, but the store has no record of sandbox:ref_\S+:payment\.success/,
    );

    await deliver(receiver, event, { secret, retrySchedule: false });
    expect(await failure(() => expect(receiver).toHaveProcessedExactlyOnce(event))).toMatch(/was released after run 1: its handler threw/);
    expect(await failure(() => expect(runs).toHaveProcessedExactlyOnce(event))).toMatch(/returned 0 times \(run 1: threw\)/);

    mode = 'ok';
    await deliver(receiver, event, { secret, retrySchedule: false });
    await expect(receiver).toHaveProcessedExactlyOnce(event);
    await expect(receiver).toHaveProcessedExactlyOnce(event.reference, 'payment.success');
    await expect(runs).toHaveProcessedExactlyOnce(event);
    await expect({ receiver, runs }).toHaveProcessedExactlyOnce(event);
    // The same reference in live mode is another key, and another event of it has its own.
    await expect(receiver).not.toHaveProcessedExactlyOnce(event.reference, 'payment.success', { mode: 'live' });
    await expect(receiver).not.toHaveProcessedExactlyOnce(event.reference, 'payment.refunded');
    expect(await failure(() => expect(receiver).not.toHaveProcessedExactlyOnce(event))).toMatch(
      /not to have been processed exactly once, but the store marks sandbox:ref_\S+ done \(handlers returned, after 2 runs\)/,
    );

    const rejected = createEvent('payment.success');
    mode = 'reject';
    await deliver(receiver, rejected, { secret });
    expect(await failure(() => expect(receiver).toHaveProcessedExactlyOnce(rejected))).toMatch(
      /done with outcome "rejected": a handler threw NonRetriableError/,
    );
  });

  it('counts the runs of a record: two completed runs fail it, whatever the store says', async () => {
    const runs = recordRuns();
    const handler = runs.track(() => {});
    const event = createEvent('payment.refunded');
    // The same event handled by two receivers with separate stores: the effect happened twice.
    for (const store of [memoryStore(), memoryStore()]) {
      await deliver(createReceiver({ secret, store, logger: quiet }).on('payment.refunded', handler), event, { secret });
    }
    expect(runs.completed(event.reference, 'payment.refunded')).toBe(2);
    expect(await failure(() => expect(runs).toHaveProcessedExactlyOnce(event))).toMatch(/returned 2 times \(run 1: ok, run 1: ok\)/);
  });

  it('reads a store directly with the default dedupe key, and a receiver with its own', async () => {
    const store = memoryStore();
    const receiver = createReceiver({ secret, store, logger: quiet, dedupeKey: (e) => `custom:${e.reference}` }).onAny(() => {});
    const event = createEvent('payment.cancelled');
    await deliver(receiver, event, { secret });
    await expect(receiver).toHaveProcessedExactlyOnce(event);
    expect(await failure(() => expect(store).toHaveProcessedExactlyOnce(event))).toMatch(/no record of sandbox:ref_\S+:payment\.cancelled/);
  });

  it('explains a value it cannot check', async () => {
    await expect(expect({}).toHaveProcessedExactlyOnce('ref_x', 'payment.success')).rejects.toThrow(
      /^\[@payhook\/testing\] toHaveProcessedExactlyOnce checks a receiver, a store, a recordRuns\(\) record/,
    );
    const receiver = createReceiver({ secret, logger: quiet });
    await expect(expect(receiver).toHaveProcessedExactlyOnce('ref_x' as never)).rejects.toThrow(/pass the event name too/);
  });
});

describe('toHaveBeenDelivered', () => {
  it('lists every delivery and the statuses its attempts got', async () => {
    const down = () => new Response(null, { status: 503 });
    const result = await deliver(down, createEvent('payment.success'), { secret, retrySchedule: [1_000] });
    expect(result).not.toHaveBeenDelivered();
    expect(await failure(() => expect(result).toHaveBeenDelivered())).toMatch(
      /^expected every delivery to get a 2xx:\n {2}delivery 0 \(payment\.success ref_\S+\): failed, attempts answered 503, 503$/,
    );
    const ok = await deliver(() => new Response(null, { status: 204 }), createEvent('payment.success'), { secret });
    expect(ok).toHaveBeenDelivered();
    expect(ok.deliveries[0]).toHaveBeenDelivered();
    expect(() => expect(42).toHaveBeenDelivered()).toThrow(/^\[@payhook\/testing\] toHaveBeenDelivered checks a deliver\(\) result/);
    expect([]).not.toHaveBeenDelivered();
  });

  it("names each attempt's outcome, and for refused signatures says to check the secret and the header the service sent", async () => {
    const receiver = createReceiver({ secret: 'whsec_not_the_one', store: memoryStore(), logger: quiet }).onAny(() => {});
    const refused = await deliver(receiver, createEvent('payment.success'), {
      secret,
      signatureHeader: 'X-Epay-Signature',
      retrySchedule: [1_000],
    });
    const message = await failure(() => expect(refused).toHaveBeenDelivered());
    expect(message).toMatch(
      /^expected every delivery to get a 2xx:\n {2}delivery 0 \(payment\.success ref_\S+\): failed, attempts answered 401 unauthorized, 401 unauthorized\n/,
    );
    expect(message).toMatch(
      /hint: the receiver refused the signature \(401\): check that the receiver's secret is the webhook secret the service signs with/,
    );
    expect(message).toMatch(/the receiver's signatureHeader names the header the service sent, x-epay-signature\.$/);

    // Other refusals get their outcome and no signature hint; a missing answer says why.
    const failing = createReceiver({ secret, store: memoryStore(), logger: quiet }).onAny(() => {
      throw new Error('down');
    });
    const failed = await deliver(failing, createEvent('payment.success'), { secret, retrySchedule: false });
    expect(await failure(() => expect(failed).toHaveBeenDelivered())).toMatch(/attempts answered 500 failed$/);
    const broken = () => {
      throw new Error('socket hang up');
    };
    const unanswered = await deliver(broken, createEvent('payment.success'), { secret, retrySchedule: false });
    expect(await failure(() => expect(unanswered).toHaveBeenDelivered())).toMatch(
      /attempts answered no answer \(connection error: socket hang up\)$/,
    );
  });

  it("reads the reference service's recorded answers: outcome and signature header", async () => {
    const ref = await startReferenceService();
    try {
      await ref.deliverTo(createReceiver({ secret: 'whsec_not_the_one', store: memoryStore(), logger: quiet }).onAny(() => {}));
      const { reference } = await ref.createTransaction();
      await ref.pay(reference);
      const message = await failure(() => expect(ref.deliveries({ reference })).toHaveBeenDelivered());
      expect(message).toMatch(
        /^expected every delivery to get a 2xx:\n {2}dlv_1 \(payment\.success P\w+\): retrying, attempts answered 401 unauthorized\n/,
      );
      expect(message).toMatch(/signatureHeader names the header the service sent, x-service-signature\.$/);
    } finally {
      await ref.close();
    }
  });
});

describe('the matchers need no test framework', () => {
  it('return { pass, message } from plain calls, as jest and vitest both take them', async () => {
    const receiver = createReceiver({ secret, logger: quiet }).onAny(() => {});
    const event = createEvent('payment.success');
    const before = await payhookMatchers.toHaveProcessedExactlyOnce.call({}, receiver, event);
    expect(before.pass).toBe(false);
    await deliver(receiver, event, { secret });
    const after = await payhookMatchers.toHaveProcessedExactlyOnce.call({ isNot: false }, receiver, event.reference, 'payment.success');
    expect(after).toEqual({ pass: true, message: expect.any(Function) });
    expect(after.message()).toMatch(/^expected payment\.success of ref_\S+ not to have been processed exactly once/);
  });
});
