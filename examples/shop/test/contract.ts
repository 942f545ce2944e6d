import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { getRequestListener } from '@hono/node-server';
import { connect, createEvents, deliver, payhookMatchers, startReferenceService, type DeliveryTarget } from '@payhook/testing';
import { createShop, type Shop } from '@payhook/example-shop';

expect.extend(payhookMatchers);

const quiet = { info() {}, warn() {}, error() {} };
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * The app on a port of 127.0.0.1, whatever its framework (connect() reaches Fastify through
 * inject and fetch apps in process): Fastify listens itself, a fetch app is served by
 * @hono/node-server, an Express app or Node listener by node:http.
 */
async function overHttp(app: DeliveryTarget): Promise<{ origin: string; close(): Promise<void> }> {
  const fastify = app as { inject?: unknown; listen?: (o: { port: number; host: string }) => Promise<string> };
  if (typeof fastify.inject === 'function' && typeof fastify.listen === 'function') {
    // Closed with the app.
    return { origin: await fastify.listen({ port: 0, host: '127.0.0.1' }), close: async () => {} };
  }
  const fetchApp = app as { fetch?: (request: Request) => Response | Promise<Response> };
  const server = http.createServer(
    typeof fetchApp.fetch === 'function'
      ? getRequestListener((request) => fetchApp.fetch!(request))
      : (app as (req: http.IncomingMessage, res: http.ServerResponse) => void),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * What every example must do, written once with @payhook/testing and run against each
 * framework's `createApp(shop)`: the reference service delivers to the real app.
 */
export function shopContract(name: string, createApp: (shop: Shop) => DeliveryTarget | Promise<DeliveryTarget>): void {
  async function started(env: Record<string, string> = {}, signatureHeader?: string) {
    const ref = await startReferenceService({ signatureHeader });
    const shop = createShop({ ...ref.env, ...env }, { logger: quiet });
    const app = await createApp(shop);
    await ref.deliverTo(app);
    const api = await connect(app);
    const checkout = async (merchantReference: string) => {
      const res = await api.fetch(
        '/checkout',
        json({ amount: '100.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference }),
      );
      expect(res.status).toBe(200);
      return (await res.json()) as { reference: string; checkoutUrl: string };
    };
    const order = async (merchantReference: string) => (await api.fetch(`/orders/${merchantReference}`)).json();
    return {
      ref,
      shop,
      app,
      checkout,
      order,
      async [Symbol.asyncDispose]() {
        await api.close();
        await ref.close();
        await (app as { close?: () => Promise<unknown> }).close?.();
        await shop.close();
      },
    };
  }

  describe(`the ${name} example`, () => {
    it('five duplicate deliveries of a payment show as one event on the order', async () => {
      await using t = await started();
      const { reference } = await t.checkout('order-dup');
      await t.ref.addFault({ type: 'duplicate', times: 4, reference });
      await t.ref.pay(reference);
      await t.ref.runRetrySchedule(); // copies answered 409 while the first ran are retried, then answered duplicate

      expect(t.ref.deliveries({ reference })).toHaveLength(5);
      expect(t.ref.deliveries({ reference })).toHaveBeenDelivered();
      expect(await t.order('order-dup')).toEqual({
        merchantReference: 'order-dup',
        reference,
        status: 'completed',
        events: ['payment.success'],
      });
      await expect(t.shop).toHaveProcessedExactlyOnce(reference, 'payment.success');
    });

    it('a retry storm (every event five times, five at once, shuffled) runs each event once', async () => {
      await using t = await started();
      const events = createEvents(['payment.success', 'payment.refunding', 'payment.refunded'], { merchantReference: 'order-storm' });
      const result = await deliver(t.app, events, {
        secret: t.ref.webhookSecret,
        duplicates: 5,
        concurrency: 5,
        reorder: 'shuffle',
      });
      expect(result.deliveries).toHaveLength(15);
      expect(result).toHaveBeenDelivered();
      const { events: ran } = (await t.order('order-storm')) as { events: string[] };
      expect([...ran].sort()).toEqual(['payment.refunded', 'payment.refunding', 'payment.success']);
      for (const event of events) await expect(t.shop).toHaveProcessedExactlyOnce(event);
    });

    it('reads ePay’s X-Epay-Signature with PAYHOOK_SIGNATURE_HEADER, and without it the interface’s header only', async () => {
      await using epay = await started({ PAYHOOK_SIGNATURE_HEADER: 'X-Epay-Signature' }, 'X-Epay-Signature');
      const paid = await epay.checkout('order-epay');
      await epay.ref.pay(paid.reference);
      expect(epay.ref.deliveries({ reference: paid.reference }).map((d) => [d.signatureHeader, d.state])).toEqual([
        ['x-epay-signature', 'delivered'],
      ]);
      expect(await epay.order('order-epay')).toMatchObject({ status: 'completed', events: ['payment.success'] });

      // Unset, the shop reads X-Service-Signature: ePay's header alone is refused, and nothing runs.
      await using plain = await started({}, 'X-Epay-Signature');
      const refused = await plain.checkout('order-plain');
      await plain.ref.pay(refused.reference);
      expect(plain.ref.deliveries({ reference: refused.reference })[0]!.attempts[0]!.status).toBe(401);
      expect(await plain.order('order-plain')).toMatchObject({ status: 'pending', events: [] });
    });

    it('a refund the service delivers before its payment is handled first: payhook does not reorder', async () => {
      await using t = await started();
      const { reference } = await t.checkout('order-late');
      await t.ref.addFault({ type: 'reorder', count: 2, reference });
      await t.ref.pay(reference); // held by the fault until the refund's delivery exists
      await t.ref.refund(reference);
      expect(t.ref.deliveries({ reference })).toHaveBeenDelivered();
      expect(await t.order('order-late')).toMatchObject({ reference, events: ['payment.refunding', 'payment.success'] });
    });

    it('mounts the board at /admin/payments behind Basic auth: the paid payment listed, a replay posted with the page’s token', async () => {
      await using t = await started({ PAYHOOK_BOARD_PASSWORD: 'board-pass' });
      const web = await overHttp(t.app);
      try {
        const get = (path: string, headers: Record<string, string> = {}) =>
          fetch(`${web.origin}${path}`, { redirect: 'manual', headers: { authorization: basic('admin', 'board-pass'), ...headers } });

        const closed = await fetch(`${web.origin}/admin/payments/`);
        expect(closed.status).toBe(401);
        expect(closed.headers.get('www-authenticate')).toBe('Basic realm="payhook board", charset="UTF-8"');
        expect((await get('/admin/payments/', { authorization: basic('admin', 'wrong') })).status).toBe(401);

        const { reference } = await t.checkout('order-board');
        await t.ref.pay(reference);
        await t.shop.receiver.idle();
        const list = await get('/admin/payments/');
        expect(list.status).toBe(200);
        expect(await list.text()).toContain(`>${reference}<`);

        const ledger = t.shop.store.ledger!;
        const [paid] = await ledger.list({ reference });
        expect(paid!.outcome).toBe('processed');
        const confirm = await get(`/admin/payments/confirm?action=replay&id=${encodeURIComponent(paid!.id)}`);
        expect(confirm.status).toBe(200);
        const cookie = confirm.headers.getSetCookie()[0]!.split(';')[0]!;
        expect(cookie).toMatch(/^payhook_board=[\w-]{43}$/);
        const csrf = /name="csrf" value="([^"]+)"/.exec(await confirm.text())![1]!;
        const post = (fields: Record<string, string>, site: string) =>
          fetch(`${web.origin}/admin/payments/actions/replay`, {
            method: 'POST',
            redirect: 'manual',
            headers: {
              authorization: basic('admin', 'board-pass'),
              cookie,
              origin: web.origin,
              'sec-fetch-site': site,
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: new URLSearchParams(fields).toString(),
          });

        const replay = await post({ csrf, id: paid!.id }, 'same-origin');
        expect(replay.status).toBe(303);
        const after = await get(replay.headers.get('location')!, { cookie });
        expect(after.status).toBe(200);
        expect(await after.text()).toMatch(/Replayed: <span[^>]*>duplicate<\/span>/);
        const recorded = (await ledger.list({ reference })).length;
        expect(recorded).toBe(2);

        expect((await post({ csrf, id: paid!.id }, 'cross-site')).status).toBe(403);
        expect((await post({ id: paid!.id }, 'same-origin')).status).toBe(403);
        // Refused: no replay ran.
        expect(await ledger.list({ reference })).toHaveLength(recorded);
      } finally {
        await web.close();
      }
    });
  });
}
