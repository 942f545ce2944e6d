import { describe, expect, it } from 'vitest';
import { connect, createEvents, deliver, payhookMatchers, startReferenceService, type DeliveryTarget } from '@payhook/testing';
import { createShop, type Shop } from '@payhook/example-shop';

expect.extend(payhookMatchers);

const quiet = { info() {}, warn() {}, error() {} };
const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/**
 * What every example must do, written once with @payhook/testing and run against each
 * framework's `createApp(shop)`: the reference service delivers to the real app.
 */
export function shopContract(name: string, createApp: (shop: Shop) => DeliveryTarget | Promise<DeliveryTarget>): void {
  async function started() {
    const ref = await startReferenceService();
    const shop = createShop(ref.env, { logger: quiet });
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

    it('a refund the service delivers before its payment is handled first: payhook does not reorder', async () => {
      await using t = await started();
      const { reference } = await t.checkout('order-late');
      await t.ref.addFault({ type: 'reorder', count: 2, reference });
      await t.ref.pay(reference); // held by the fault until the refund's delivery exists
      await t.ref.refund(reference);
      expect(t.ref.deliveries({ reference })).toHaveBeenDelivered();
      expect(await t.order('order-late')).toMatchObject({ reference, events: ['payment.refunding', 'payment.success'] });
    });
  });
}
