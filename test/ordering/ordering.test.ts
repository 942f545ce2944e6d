import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '@payhook/client';
import { createReceiver, memoryStore, type DeliveryReport, type ReceiverOptions } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { merchants, SANDBOX_KEY, SECRET, start, type Started } from '@payhook/test-support/apps/reference-service';

const MINUTE = 60_000;
/** The lifecycles of the issue, as the sandbox's actions that make each event. */
const LIFECYCLES: Record<string, { actions: string[]; events: string[] }> = {
  refunded: { actions: ['pay', 'refund', 'complete-refund'], events: ['payment.success', 'payment.refunding', 'payment.refunded'] },
  reversed: { actions: ['pay', 'reverse'], events: ['payment.success', 'payment.reversed'] },
  cancelled: { actions: ['cancel'], events: ['payment.cancelled'] },
};

interface Harness {
  ref: Started;
  server: Server;
  /** The events each transaction's handlers saw, in the order they ran. */
  seen: Map<string, string[]>;
  reports: DeliveryReport[];
}
const opened: Harness[] = [];
afterEach(async () => {
  for (const h of opened.splice(0)) {
    await h.ref.close();
    h.ref.service.close();
    await new Promise((r) => h.server.close(r));
  }
});

/** The reference service (manual clock) delivering to a receiver with the ordering guard, over real HTTP. */
async function harness(ordering: ReceiverOptions['ordering']): Promise<Harness> {
  const seen = new Map<string, string[]>();
  const reports: DeliveryReport[] = [];
  let client: ReturnType<typeof createClient> | undefined;
  const lazyClient = {
    transactions: {
      retrieve: (r: string) => client!.transactions.retrieve(r),
      verify: (r: string) => client!.transactions.verify(r),
      timeline: (r: string) => client!.transactions.timeline(r),
    },
  };
  const receiver = createReceiver({
    secret: SECRET,
    store: memoryStore(),
    ordering,
    client: lazyClient,
    logger: (_level, fields) => void ('outcome' in fields && reports.push(fields as DeliveryReport)),
  }).onAny(async (event) => {
    seen.set(event.reference, [...(seen.get(event.reference) ?? []), event.event]);
  });
  const server = createServer(toNodeListener(receiver));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const ref = await start({
    allowHttpCallbacks: true,
    merchants: merchants(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`),
  });
  client = createClient({ apiKey: SANDBOX_KEY, baseUrl: ref.url });
  const h = { ref, server, seen, reports };
  opened.push(h);
  return h;
}

/** Each lifecycle's events held by the reorder fault and sent newest first; then the service's retries, on its clock. */
async function reordered(h: Harness) {
  const references: Record<string, string> = {};
  for (const [name, { actions }] of Object.entries(LIFECYCLES)) {
    const reference = await h.ref.initialize({ merchantReference: `order-${name}` });
    references[name] = reference;
    expect((await h.ref.call('POST', '/_sandbox/faults', { body: { type: 'reorder', count: actions.length, reference } })).status).toBe(
      201,
    );
    for (const action of actions) expect((await h.ref.call('POST', `/_sandbox/transactions/${reference}/${action}`)).status).toBe(200);
  }
  const settled = () =>
    Object.values(references).every((reference) =>
      h.ref.service.deliveries({ reference }).every((d) => d.state === 'delivered' || d.state === 'failed'),
    );
  // The service's own schedule: attempts a minute, then five minutes, apart.
  for (let i = 0; i < 40 && !settled(); i++) {
    // Resolves once the deliveries its timers started have been answered.
    await h.ref.service.clock.advance(i === 0 ? 0 : MINUTE);
  }
  expect(settled()).toBe(true);
  return references;
}

describe.each(['hold', 'fetch'] as const)("the ordering guard (%s) against the reference service's reorder fault", (ordering) => {
  it("runs every lifecycle's handlers in lifecycle order, each event once", async () => {
    const h = await harness(ordering);
    const references = await reordered(h);
    for (const [name, { events }] of Object.entries(LIFECYCLES)) {
      expect(h.seen.get(references[name]!), name).toEqual(events);
      // Every delivery was answered 2xx in the end: none failed at the service.
      expect(
        h.ref.service.deliveries({ reference: references[name]! }).map((d) => d.state),
        name,
      ).toEqual(events.map(() => 'delivered'));
    }
    const held = h.reports.filter((r) => r.outcome === 'held');
    if (ordering === 'hold') {
      // The refund came first: held until its success and refunding ran; the reversal until its success.
      expect(held.length).toBeGreaterThanOrEqual(3);
      expect(held.find((r) => r.event === 'payment.refunded')).toMatchObject({
        status: 409,
        waitingFor: ['payment.success', 'payment.refunding'],
      });
    } else {
      // The record was fetched and the earlier events ran first: nothing held, the later copies are duplicates.
      expect(held).toEqual([]);
      expect(
        h.reports
          .filter((r) => r.source === 'reconcile' && r.outcome === 'processed')
          .map((r) => r.event)
          .sort(),
      ).toEqual(['payment.refunding', 'payment.success', 'payment.success']);
    }
  }, 60_000);
});

describe('without the guard', () => {
  it('runs handlers in the order deliveries arrive: the refund before its payment (what the guard prevents)', async () => {
    const h = await harness(undefined);
    const references = await reordered(h);
    expect(h.seen.get(references.refunded!)).toEqual(['payment.refunded', 'payment.refunding', 'payment.success']);
  }, 60_000);

  it("refuses an ordering it does not know, and 'fetch' without a client", () => {
    expect(() => createReceiver({ secret: SECRET, ordering: 'sorted' as never })).toThrow(
      /^\[@payhook\/core\] ordering must be 'hold' or 'fetch'/,
    );
    expect(() => createReceiver({ secret: SECRET, ordering: 'fetch' })).toThrow(
      /ordering: 'fetch' asks the service for the record: pass createReceiver\(\{ client/,
    );
  });
});
