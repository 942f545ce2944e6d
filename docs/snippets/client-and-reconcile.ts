// Runnable: `npx tsx docs/snippets/client-and-reconcile.ts` starts its own reference service, so
// it needs nothing else. In an app, baseUrl and the keys come from your environment instead.
import { createClient, createRateLimiter } from '@payhook/client';
import { createReceiver, createReconciler } from '@payhook/core';
import { createReferenceService } from '@payhook/reference';

const service = createReferenceService({ clock: 'manual' });
const { url: baseUrl, close } = await service.listen({ port: 0 });
const { apiKey, webhookSecret } = service.generated!;

// One limiter per API key: the app's calls and background work share the 100 requests per 60 s.
const limiter = createRateLimiter();
const client = createClient({ apiKey, baseUrl, limiter });
const background = createClient({ apiKey, baseUrl, limiter, priority: 'background' });

// Create a payment; initialize sends an idempotency key of its own unless you pass one.
const { reference, checkoutUrl } = await client.transactions.initialize(
  { amount: '1500.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference: 'order-1001' },
  { idempotencyKey: 'order-1001' },
);
console.log(`pay at ${checkoutUrl}`);

// The customer pays (here through the sandbox), but the webhook never reaches us.
await fetch(`${baseUrl}/_sandbox/transactions/${reference}/pay`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } });

// Fulfil only once the service itself says the payment completed: { verify: true }.
const receiver = createReceiver({ secret: webhookSecret, client }).on(
  'payment.success',
  (event, ctx) => console.log(`fulfil ${event.merchantReference}: the service says ${ctx.record?.status}`),
  { verify: true },
);

// The reconciler finds the payment in the list and runs its handler, once.
const reconciler = createReconciler({ client: background, receiver });
const to = new Date(service.clock.now());
const run = await reconciler.run({ from: new Date(to.getTime() - 24 * 60 * 60 * 1000), to });
console.log(`scanned ${run.scanned}, recovered ${run.recovered.map((r) => `${r.event} ${r.reference}`).join(', ')}`);
const again = await reconciler.run({ from: new Date(to.getTime() - 24 * 60 * 60 * 1000), to });
console.log(`second run recovered ${again.recovered.length}`);

await close();
service.close();
