import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '@payhook/client';
import { createReceiver, memoryStore, type DeliveryReport, type ReceiverOptions, type TransactionRecord } from '@payhook/core';
import { systemClock } from '@payhook/core/store';
import { toNodeListener } from '@payhook/core/node';
import { createEvent, signedRequest } from '@payhook/testing';
import { merchants, SANDBOX_KEY, SECRET, start, type Started } from '@payhook/test-support/apps/reference-service';

// The ordering guard against the service's truth: done records that expired, records that lag or
// belong to another transaction. A half-hour store retention stands in for the real 24 hours and
// 30 days; the receiver, its store and the reference service share the service's manual clock.
const MINUTE = 60_000;
/** Longer than the service's retries (about 15 minutes), as the real retentions are. */
const RETENTION = 30 * MINUTE;
type Client = NonNullable<ReceiverOptions['client']>;

interface Harness {
  ref: Started;
  /** The events each transaction's handlers ran, in order. */
  seen: Map<string, string[]>;
  reports: DeliveryReport[];
  warnings: string[];
  api: ReturnType<typeof createClient>;
}
const opened: Array<{ ref: Started; server: Server }> = [];
afterEach(async () => {
  for (const { ref, server } of opened.splice(0)) {
    await ref.close();
    ref.service.close();
    await new Promise((r) => server.close(r));
  }
});

/** `client`: the receiver's client over the reference's API, as given (a wrapper that lies or lags), or none. */
async function harness(
  ordering: ReceiverOptions['ordering'],
  client?: ((api: ReturnType<typeof createClient>) => Client) | 'none',
): Promise<Harness> {
  const seen = new Map<string, string[]>();
  const reports: DeliveryReport[] = [];
  const warnings: string[] = [];
  let ref: Started | undefined;
  let api: ReturnType<typeof createClient> | undefined;
  const now = () => ref!.service.clock.now();
  const lazy: Client = {
    transactions: {
      retrieve: (r) => wrapped().transactions.retrieve(r),
      verify: (r) => wrapped().transactions.verify(r),
      // Only when the wrapped client has one.
      get timeline() {
        const timeline = wrapped().transactions.timeline;
        return timeline && ((r: string) => timeline(r));
      },
    },
  };
  const wrapped = (): Client => (typeof client === 'function' ? client(api!) : api!);
  const receiver = createReceiver({
    secret: SECRET,
    clock: { ...systemClock, now },
    store: memoryStore({ retentionMs: RETENTION, now }),
    ordering,
    ...(client !== 'none' && { client: lazy }),
    logger: (level, fields, message) => {
      if ('outcome' in fields) reports.push(fields as DeliveryReport);
      else if (level === 'warn') warnings.push(message);
    },
  }).onAny(async (event) => void seen.set(event.reference, [...(seen.get(event.reference) ?? []), event.event]));
  const server = createServer(toNodeListener(receiver));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  ref = await start({
    allowHttpCallbacks: true,
    merchants: merchants(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`),
  });
  api = createClient({ apiKey: SANDBOX_KEY, baseUrl: ref.url, maxRetries: 0 });
  opened.push({ ref, server });
  return { ref, seen, reports, warnings, api };
}

const sandbox = (h: Harness, path: string, body?: unknown) => h.ref.call('POST', path, body === undefined ? {} : { body });

/** Move `reference`, then run the service's schedule (a minute a step) until its deliveries settled. */
async function move(h: Harness, reference: string, action: string) {
  expect((await sandbox(h, `/_sandbox/transactions/${reference}/${action}`)).status).toBe(200);
  const settled = () => h.ref.service.deliveries({ reference }).every((d) => ['delivered', 'failed', 'dropped'].includes(d.state));
  for (let i = 0; i < 40 && !settled(); i++) {
    // Resolves once the deliveries its timers started have been answered.
    await h.ref.service.clock.advance(i === 0 ? 0 : MINUTE);
  }
  expect(settled()).toBe(true);
}

/** The attempts each delivery of `reference` took, by event. */
const attempts = (h: Harness, reference: string) =>
  Object.fromEntries(h.ref.service.deliveries({ reference }).map((d) => [d.event, `${d.state} after ${d.attempts.length}`]));

describe.each([
  ['hold', 'none'],
  ['hold', undefined],
  ['fetch', undefined],
] as const)("ordering %s (client: %s) across the store's retention", (ordering, client) => {
  it("a refund long after its payment is handled, and the payment's handler does not run again", async () => {
    const h = await harness(ordering, client);
    const reference = await h.ref.initialize();
    await move(h, reference, 'pay');
    // The done record of the success expires with the store's retention.
    await h.ref.service.clock.advance(2 * RETENTION);
    await move(h, reference, 'refund');
    await h.ref.service.clock.advance(2 * RETENTION);
    await move(h, reference, 'complete-refund');
    expect(h.seen.get(reference)).toEqual(['payment.success', 'payment.refunding', 'payment.refunded']);
    expect(h.reports.filter((r) => r.source === 'reconcile')).toEqual([]);
    if (client === 'none') {
      // Without the service, nothing says the success happened long ago: held, then run by the service's 4th attempt.
      expect(attempts(h, reference)).toEqual({
        'payment.success': 'delivered after 1',
        'payment.refunding': 'delivered after 4',
        'payment.refunded': 'delivered after 4',
      });
      expect(h.warnings).toHaveLength(2);
    } else {
      // The service's paidAt and timeline say both happened before the store's memory: they count as run.
      expect(attempts(h, reference)).toEqual({
        'payment.success': 'delivered after 1',
        'payment.refunding': 'delivered after 1',
        'payment.refunded': 'delivered after 1',
      });
      expect(h.reports.filter((r) => r.outcome === 'held')).toEqual([]);
    }
  }, 30_000);

  it("a refund whose payment was never handled is held, then handled within the service's 5 attempts (logged at warn)", async () => {
    const h = await harness(ordering, client);
    const reference = await h.ref.initialize();
    // The success is lost on its way: its done record is missing, and the service says it happened just now.
    expect((await sandbox(h, '/_sandbox/faults', { type: 'drop', reference, event: 'payment.success' })).status).toBe(201);
    await move(h, reference, 'pay');
    await move(h, reference, 'refund');
    if (ordering === 'hold') {
      // Nobody runs the lost success in hold mode (the reconciler would): the refund waits for it, then runs.
      expect(h.seen.get(reference)).toEqual(['payment.refunding']);
      expect(attempts(h, reference)['payment.refunding']).toBe('delivered after 4');
      expect(h.reports.filter((r) => r.outcome === 'held').map((r) => r.waitingFor)).toEqual([
        ['payment.success'],
        ['payment.success'],
        ['payment.success'],
      ]);
      expect(h.warnings).toEqual([
        expect.stringMatching(/^\[@payhook\/core\] ran payment.refunding of \S+ after holding it 3 times for payment.success/),
      ]);
    } else {
      // fetch: the success's time is the record's paidAt, within the retention: run from the record first.
      expect(h.seen.get(reference)).toEqual(['payment.success', 'payment.refunding']);
      expect(attempts(h, reference)['payment.refunding']).toBe('delivered after 1');
    }
  }, 30_000);
});

describe("ordering fetch takes only the service's truth", () => {
  it('never dispatches a record of another transaction or mode: 503 until the bound, and no success nobody sent', async () => {
    let other: TransactionRecord | undefined;
    const h = await harness('fetch', (api) => ({ transactions: { ...api.transactions, retrieve: async () => other! } }));
    const b = await h.ref.initialize({ merchantReference: 'order-b' });
    await move(h, b, 'pay');
    other = await h.api.transactions.retrieve(b);
    const a = await h.ref.initialize({ merchantReference: 'order-a' });
    expect((await sandbox(h, '/_sandbox/faults', { type: 'drop', reference: a, event: 'payment.success' })).status).toBe(201);
    await move(h, a, 'pay');
    await move(h, a, 'refund');
    // B's success ran once, from its own webhook; A's was never run from B's record.
    expect(h.seen.get(b)).toEqual(['payment.success']);
    expect(h.seen.get(a)).toEqual(['payment.refunding']);
    const refused = h.reports.filter((r) => r.reference === a && r.outcome === 'verify-unavailable');
    expect(refused).toHaveLength(3);
    expect(String((refused[0] as { err?: unknown }).err)).toMatch(
      new RegExp(`asked for ${a} \\(sandbox\\), the service answered the record of ${b} \\(sandbox\\)`),
    );
    expect(h.reports.filter((r) => r.source === 'reconcile')).toEqual([]);
  }, 30_000);

  it('a record in the other mode is refused the same way', async () => {
    const h = await harness('fetch', (api) => ({
      transactions: { ...api.transactions, retrieve: async (r) => ({ ...(await api.transactions.retrieve(r)), mode: 'live' as const }) },
    }));
    const reference = await h.ref.initialize();
    expect((await sandbox(h, '/_sandbox/faults', { type: 'drop', reference, event: 'payment.success' })).status).toBe(201);
    await move(h, reference, 'pay');
    await move(h, reference, 'refund');
    expect(h.seen.get(reference)).toEqual(['payment.refunding']);
    expect(String((h.reports.find((r) => r.outcome === 'verify-unavailable') as { err?: unknown }).err)).toMatch(
      /\(sandbox\), the service answered the record of \S+ \(live\)/,
    );
  }, 30_000);

  it('an API that lags behind its webhook gets 503 and the retry is handled, in order', async () => {
    let stale = 2;
    const h = await harness('fetch', (api) => ({
      transactions: {
        ...api.transactions,
        // The first reads still say completed after the refunding webhook went out.
        retrieve: async (r) => ({ ...(await api.transactions.retrieve(r)), ...(stale-- > 0 && { status: 'completed' as const }) }),
      },
    }));
    const reference = await h.ref.initialize();
    expect((await sandbox(h, '/_sandbox/faults', { type: 'drop', reference, event: 'payment.success' })).status).toBe(201);
    await move(h, reference, 'pay');
    await move(h, reference, 'refund');
    expect(h.seen.get(reference)).toEqual(['payment.success', 'payment.refunding']);
    expect(attempts(h, reference)['payment.refunding']).toBe('delivered after 3');
    const lagged = h.reports.filter((r) => r.outcome === 'verify-unavailable');
    expect(lagged.map((r) => r.status)).toEqual([503, 503]);
    expect(String((lagged[0] as { err?: unknown }).err)).toMatch(
      /still says completed, behind the payment.refunding it sent; answered 503 so that the service retries/,
    );
    expect(h.reports.filter((r) => r.outcome === 'mismatch')).toEqual([]);
  }, 30_000);

  it('an earlier event the service shows no time for is never run from the record: held, bounded', async () => {
    const h = await harness('fetch', (api) => ({ transactions: { ...api.transactions, timeline: undefined } }));
    const reference = await h.ref.initialize();
    await move(h, reference, 'pay');
    expect((await sandbox(h, '/_sandbox/faults', { type: 'drop', reference, event: 'payment.refunding' })).status).toBe(201);
    await move(h, reference, 'refund');
    await move(h, reference, 'complete-refund');
    // The refunding's time would be on the timeline, which this client cannot read: it may have run and been forgotten.
    expect(h.seen.get(reference)).toEqual(['payment.success', 'payment.refunded']);
    const held = h.reports.filter((r) => r.outcome === 'held');
    expect(held).toHaveLength(3);
    expect(String((held[0] as { err?: unknown }).err)).toMatch(
      /shows no time for payment.refunding of \S+ \(the client has no timeline\(\)\)/,
    );
    expect(attempts(h, reference)['payment.refunded']).toBe('delivered after 4');
  }, 30_000);
});

describe('ordering hold without a client', () => {
  it("takes the success's time from a payload that carries paidAt: long ago runs at once, just now is held", async () => {
    const receiver = createReceiver({ secret: SECRET, store: memoryStore({ retentionMs: RETENTION }), ordering: 'hold', logger: () => {} })
      .on('payment.success', () => {})
      .on('payment.refunding', () => {});
    const outcome = async (paidAt: number) => {
      const event = createEvent('payment.refunding', { paidAt: new Date(paidAt).toISOString() });
      return (await receiver.handle(signedRequest(event, { secret: SECRET }))).status;
    };
    expect(await outcome(Date.now() - 2 * RETENTION)).toBe(200);
    expect(await outcome(Date.now() - MINUTE)).toBe(409);
  });
});
