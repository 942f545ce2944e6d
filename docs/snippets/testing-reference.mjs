// docs/guides/testing/README.md, "startReferenceService": the reference service delivers a payment five times
// to a receiver on node:http, and the handler runs once. Plain JavaScript for Node 20 or newer:
// `node docs/snippets/testing-reference.mjs` where @payhook/testing and @payhook/core are installed.
import assert from 'node:assert/strict';
import http from 'node:http';
import { createReceiver } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { payhookMatchers, recordRuns, startReferenceService } from '@payhook/testing';

const ref = await startReferenceService(); // a manual clock, a sandbox key and a webhook secret
const runs = recordRuns();
const paid = new Set();
const receiver = createReceiver({ secret: ref.webhookSecret }).on(
  'payment.success',
  runs.track((event) => {
    paid.add(event.merchantReference);
  }),
);
const server = http.createServer(toNodeListener(receiver));

try {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await ref.deliverTo(server); // the service's webhooks now go to http://127.0.0.1:<port>/webhooks

  const { reference, merchantReference } = await ref.createTransaction({ merchantReference: 'order-1' });
  await ref.addFault({ type: 'duplicate', times: 4, reference }); // the next delivery is sent 5 times
  await ref.pay(reference); // resolves once every copy's first attempt was answered
  await ref.runRetrySchedule(); // 15 virtual minutes: any retry runs now

  // The matchers return { pass, message }: usable without vitest or jest.
  const once = await payhookMatchers.toHaveProcessedExactlyOnce.call({}, { receiver, runs }, reference, 'payment.success');
  assert.ok(once.pass, once.message());
  const delivered = payhookMatchers.toHaveBeenDelivered.call({}, ref.deliveries({ reference }));
  assert.ok(delivered.pass, delivered.message());

  assert.equal(ref.deliveries({ reference }).length, 5);
  assert.equal(runs.completed(reference, 'payment.success'), 1);
  assert.ok(paid.has(merchantReference));
  console.log(`testing-reference: ok (5 deliveries, handler ran ${runs.completed(reference, 'payment.success')} time)`);
} finally {
  await ref.close();
  await new Promise((resolve) => server.close(resolve));
}
