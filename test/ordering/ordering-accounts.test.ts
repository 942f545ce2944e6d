import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '@payhook/client';
import { createReceiver, memoryStore, type DeliveryReport, type RecordClient } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { createReferenceService } from '@payhook/reference';

/**
 * The ordering guard on a platform's receiver (issue 50): an account's earlier events are looked up
 * under that account's keys, and with `fetch` its record is read with that account's own API key.
 */
const MINUTE = 60_000;
const ACCOUNTS = ['shop_a', 'shop_b'].map((id) => ({ id, key: `sk_test_ordering_${id}_key`, secret: `whsec_ordering_${id}` }));

const opened: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

async function platform(ordering: 'hold' | 'fetch') {
  const service = createReferenceService({
    clock: 'manual',
    allowHttpCallbacks: true,
    merchants: ACCOUNTS.map((a) => ({ id: a.id, apiKeys: [{ key: a.key }], webhookSecret: a.secret })),
  });
  const ref = await service.listen({ port: 0, host: '127.0.0.1' });
  // Which account's key each request to the service was made with.
  const asked: string[] = [];
  const clientOf = (a: (typeof ACCOUNTS)[number]): RecordClient => {
    const client = createClient({ apiKey: a.key, baseUrl: ref.url });
    const counted =
      <T>(call: (r: string) => Promise<T>) =>
      (r: string) => (asked.push(a.id), call(r));
    return {
      transactions: {
        retrieve: counted((r) => client.transactions.retrieve(r)),
        verify: counted((r) => client.transactions.verify(r)),
        timeline: counted((r) => client.transactions.timeline(r)),
      },
    };
  };
  const clients = new Map(ACCOUNTS.map((a) => [a.id, clientOf(a)]));
  const seen: [string | undefined, string, string][] = [];
  const reports: DeliveryReport[] = [];
  const receiver = createReceiver({
    store: memoryStore(),
    ordering,
    logger: (_level, fields) => void ('outcome' in fields && reports.push(fields as DeliveryReport)),
    accounts: {
      resolve: (name) => {
        const a = ACCOUNTS.find((x) => x.id === name);
        return a && { secret: a.secret, client: clients.get(a.id) };
      },
    },
  }).onAny((event, ctx) => void seen.push([ctx.account, event.reference, event.event]));
  const server: Server = createServer(toNodeListener(receiver));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/epay`;
  opened.push(async () => {
    await ref.close();
    service.close();
    await new Promise((r) => server.close(r));
  });

  /** One of the account's payments refunded, its three deliveries held by the reorder fault and sent newest first. */
  async function refundedOutOfOrder(account: string) {
    const a = ACCOUNTS.find((x) => x.id === account)!;
    const call = (path: string, body?: unknown) =>
      fetch(ref.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as { reference?: string } }));
    const init = await call('/v1/transactions/initialize', {
      amount: '80.00',
      currencyCode: 'ETB',
      customerPhone: '0911234567',
      merchantReference: `order-${account}`,
      callbackUrl: `${base}/${account}`,
    });
    const reference = init.json.reference!;
    expect((await call('/_sandbox/faults', { type: 'reorder', count: 3, reference })).status).toBe(201);
    for (const action of ['pay', 'refund', 'complete-refund'])
      expect((await call(`/_sandbox/transactions/${reference}/${action}`)).status).toBe(200);
    return reference;
  }
  async function settle(references: string[]) {
    const settled = () =>
      references.every((reference) => service.deliveries({ reference }).every((d) => d.state === 'delivered' || d.state === 'failed'));
    for (let i = 0; i < 40 && !settled(); i++) await service.clock.advance(i === 0 ? 0 : MINUTE);
    expect(settled()).toBe(true);
  }
  return { seen, reports, asked, refundedOutOfOrder, settle };
}

const LIFECYCLE = ['payment.success', 'payment.refunding', 'payment.refunded'];

describe.each(['hold', 'fetch'] as const)('the ordering guard (%s) on a receiver with accounts', (ordering) => {
  it("runs each account's lifecycle in order, each event once and as that account's; asks the service only with the account's own key", async () => {
    const p = await platform(ordering);
    const a = await p.refundedOutOfOrder('shop_a');
    const b = await p.refundedOutOfOrder('shop_b');
    await p.settle([a, b]);
    expect(p.seen.filter(([, r]) => r === a)).toEqual(LIFECYCLE.map((e) => ['shop_a', a, e]));
    expect(p.seen.filter(([, r]) => r === b)).toEqual(LIFECYCLE.map((e) => ['shop_b', b, e]));
    // Every question about a's transaction went with a's key, and b's with b's (another key gets 404).
    expect(p.reports.filter((r) => r.outcome === 'mismatch' || r.outcome === 'verify-unavailable')).toEqual([]);
    if (ordering === 'fetch') {
      expect(new Set(p.asked)).toEqual(new Set(['shop_a', 'shop_b']));
      expect(p.reports.filter((r) => r.outcome === 'held')).toEqual([]);
      const recovered = p.reports.filter((r) => r.source === 'reconcile' && r.outcome === 'processed');
      expect(recovered.map((r) => [r.account, r.event]).sort()).toEqual(
        [
          ['shop_a', 'payment.refunding'],
          ['shop_a', 'payment.success'],
          ['shop_b', 'payment.refunding'],
          ['shop_b', 'payment.success'],
        ].sort(),
      );
    } else {
      expect(p.reports.filter((r) => r.outcome === 'held').map((r) => r.account)).toEqual(expect.arrayContaining(['shop_a', 'shop_b']));
    }
  }, 60_000);
});
