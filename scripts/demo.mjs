// A scripted end-to-end run of @payhook/core on a real HTTP server: signed deliveries arrive,
// are verified, deduplicated and routed; bad ones are refused. Run with `pnpm demo`.
import http from 'node:http';
import { createReceiver, sign } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';

const secret = 'whsec_demo_' + Math.random().toString(36).slice(2);
const processed = [];
const receiver = createReceiver({ secret, budgetMs: 500, logger: { info() {}, warn() {}, error() {} } })
  .on('payment.success', (event) => void processed.push(`${event.event} ${event.reference}`))
  .on(['payment.refunding', 'payment.refunded'], (event) => void processed.push(`${event.event} ${event.reference}`))
  .on('payment.failed', () => new Promise((r) => setTimeout(r, 1_000)));

const server = http.createServer(toNodeListener(receiver));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}/webhooks`;
console.log(`payhook demo: a receiver listens on ${url}\n`);

const base = {
  mode: 'sandbox', reference: 'txn_demo_1', merchantReference: 'order-1001', amount: '1500.00', serviceFee: '45.00',
  currency: 'ETB', status: 'completed', paymentMethod: 'telebirr',
  customer: { name: 'Abebe Kebede', email: 'abebe@example.com', phone: '251911234567' },
  paidAt: '2026-11-20T09:15:02.123Z', createdAt: '2026-11-20T09:14:10.004Z',
};
async function deliver(what, body, signature = sign(body, secret)) {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signature } });
  const { outcome } = await res.json();
  console.log(`${what.padEnd(46)} → ${res.status} ${outcome}`);
  return res.status;
}
const payload = (event, extra = {}) => JSON.stringify({ event, ...base, ...extra });

const steps = [
  ['payment.success, signed', payload('payment.success'), undefined, 200],
  ['the same bytes again (a retry)', payload('payment.success'), undefined, 200],
  ['payment.refunding for the same reference', payload('payment.refunding', { status: 'refunding' }), undefined, 200],
  ['payment.refunded for the same reference', payload('payment.refunded', { status: 'refunded' }), undefined, 200],
  ['a forged delivery (wrong secret)', payload('payment.refunded'), sign(payload('payment.refunded'), 'guess'), 401],
  ['signed, but re-serialised on the way', JSON.stringify(JSON.parse(payload('payment.success', { reference: 'txn_demo_2' })), null, 1), sign(payload('payment.success', { reference: 'txn_demo_2' }), secret), 401],
  ['signed garbage', '{"event":', undefined, 400],
  ['a slow handler (1 s) past a 500 ms budget', payload('payment.failed', { reference: 'txn_demo_3', status: 'failed', paidAt: null }), undefined, 202],
];
let ok = true;
for (const [what, body, signature, expected] of steps) ok = (await deliver(what, body, signature)) === expected && ok;
console.log(`\nhandlers ran ${processed.length} times:\n  ${processed.join('\n  ')}`);
ok = ok && processed.length === 3;
server.close();
if (!ok) {
  console.error('\n[payhook] the demo did not go as expected');
  process.exit(1);
}
console.log('\nEach event ran once; duplicates, forgeries and re-serialised bodies ran nothing.');
setTimeout(() => process.exit(0), 1_100).unref();
