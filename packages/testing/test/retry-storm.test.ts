// The complete test of docs/guides/testing/README.md ("A retry storm against an app"). A test in
// guide.test.ts checks that the guide shows exactly this file, so the two cannot drift apart.
import express from 'express';
import { expect, it } from 'vitest';
import { createReceiver, type PaymentEvent } from '@payhook/core';
import { payhookExpress } from '@payhook/express';
import { createEvents, deliver, payhookMatchers, recordRuns } from '@payhook/testing';

expect.extend(payhookMatchers);

const secret = 'whsec_guide_example';

/** The app under test: an order moves pending → paid → refunding → refunded, only ever forward. */
function createShopApp() {
  const orders = new Map<string, { status: string; history: string[] }>();
  const runs = recordRuns();
  // A step that arrives before the one it follows throws: payhook answers 500, releases the
  // claim, and the service delivers it again a minute later, when its predecessor has run.
  const step = (from: string, to: string) => (event: PaymentEvent) => {
    const order = orders.get(event.merchantReference);
    if (!order) throw new Error(`no order ${event.merchantReference}`);
    if (order.status !== from) throw new Error(`${event.event} arrived while the order is ${order.status}; retry later`);
    order.status = to;
    order.history.push(event.event);
  };
  const receiver = createReceiver({ secret, logger: { warn() {}, error() {} } })
    .on('payment.success', runs.track(step('pending', 'paid')))
    .on('payment.refunding', runs.track(step('paid', 'refunding')))
    .on('payment.refunded', runs.track(step('refunding', 'refunded')));
  const app = express();
  app.all('/webhooks', payhookExpress(receiver));
  return { app, orders, receiver, runs };
}

it('survives a retry storm: each event three times at once, newest first', async () => {
  const shop = createShopApp();
  const [paid, refunding, refunded] = createEvents(['payment.success', 'payment.refunding', 'payment.refunded']);
  shop.orders.set(paid.merchantReference, { status: 'pending', history: [] });

  // Nine deliveries over real HTTP, three in flight at a time, the refund first; every
  // non-2xx is retried on the service's schedule (+1, +2, +4, +8 minutes) on a virtual clock.
  const result = await deliver(shop.app, [paid, refunding, refunded], {
    secret,
    duplicates: 3,
    concurrency: 3,
    reorder: 'reverse',
  });

  // In the end every delivery got a 2xx…
  expect(result).toHaveBeenDelivered();
  // …the early refund was refused at first (500, or 409 while a copy of it was running)…
  const refundAttempts = result.attempts.filter((a) => a.event === 'payment.refunded');
  expect(refundAttempts.filter((a) => a.at === 0).map((a) => a.status)).not.toContain(200);
  // …and handled on a retry, a virtual minute or more later, without the test waiting.
  expect(refundAttempts.find((a) => a.outcome === 'processed')!.at).toBeGreaterThanOrEqual(60_000);

  // Each event's handler ran to the end exactly once (store and handler record agree)…
  for (const event of [paid, refunding, refunded]) await expect(shop).toHaveProcessedExactlyOnce(event);
  // …in the order of the payment's life, whatever order the deliveries came in.
  expect(shop.orders.get(paid.merchantReference)).toEqual({
    status: 'refunded',
    history: ['payment.success', 'payment.refunding', 'payment.refunded'],
  });
});
