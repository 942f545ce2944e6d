// `pnpm demo`: the reference payment service and the Express example shop, talking over real HTTP.
// A payment goes through checkout; each webhook arrives, is verified and deduplicated; a duplicate
// is ignored; a refund follows; the shop goes down and the service's retries recover on a fast
// clock; a lost webhook is recovered by a reconcile run. `--keep` leaves both servers up.
// Runs from the packages' sources, which tsx finds through tsconfig.json `paths`: no build needed.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createClient } from '@payhook/client';
import { createReconciler, EPAY_SIGNATURE_HEADER, type DeliveryReport } from '@payhook/core';
import { createShop, type Order } from '@payhook/example-shop';
import { pino } from 'pino';
import { createReferenceService } from '@payhook/reference';
import { createApp } from '../examples/express/src/app.js';
import { keepHint, keepServing } from './demo/keep.js';

const { values: args } = parseArgs({
  options: { keep: { type: 'boolean' }, 'service-port': { type: 'string' }, 'shop-port': { type: 'string' } },
});
const keep = args.keep === true;
// With --keep, ports that stay the same from run to run (the reference CLI's and the examples'
// defaults), so a bookmarked dashboard and a copied command still work; without it, free ones.
const servicePort = port('service-port', keep ? 4010 : 0);
const shopPort = port('shop-port', keep ? 3000 : 0);
const MINUTE = 60_000;
const failures: string[] = [];
const say = (text = '') => console.log(text);
const check = (ok: boolean, what: string) => {
  if (!ok) failures.push(what);
  say(`   ${ok ? '✓' : '✗'} ${what}`);
};

// The shop's port is known before the service starts, so the service can call it back.
const shopServer = http.createServer();
await listenOn(shopServer, shopPort, 'shop-port');
const shopAt = (shopServer.address() as AddressInfo).port;
const shopUrl = `http://127.0.0.1:${shopAt}`;

// A real-time clock (wall time plus what `advance` adds): the story advances it to run retries at
// once, and with --keep deliveries and retries then happen by themselves.
// Signed as ePay signs, in X-Epay-Signature: the reference's own default is the interface's
// X-Service-Signature, and a shop built for ePay reads ePay's header.
const SIGNATURE_HEADER = 'X-Epay-Signature';
const service = createReferenceService({
  clock: 'real',
  allowHttpCallbacks: true,
  signatureHeader: SIGNATURE_HEADER,
  merchants: [
    {
      id: 'demo-shop',
      name: 'Demo shop',
      apiKeys: [{ key: 'sk_test_demo_shop_key_000001' }],
      webhookSecret: 'whsec_demo_shop_secret',
      callbackUrl: `${shopUrl}/webhooks`,
    },
  ],
});
const { url: serviceUrl, close: closeService } = await service
  .listen({ port: servicePort, host: '127.0.0.1' })
  .catch((error: unknown) => taken(error, servicePort, 'service-port'));
const env = {
  PAYHOOK_BASE_URL: serviceUrl,
  PAYHOOK_API_KEY: 'sk_test_demo_shop_key_000001',
  PAYHOOK_WEBHOOK_SECRET: 'whsec_demo_shop_secret',
  PAYHOOK_SIGNATURE_HEADER: SIGNATURE_HEADER,
  // The shop's board (/admin/payments, user admin): a password of this run's own, printed with --keep.
  PAYHOOK_BOARD_PASSWORD: randomBytes(9).toString('base64url'),
};

// The shop logs through pino, as it would in production. Each line pino writes is narrated, then
// shown as it is: what `pnpm --dir examples/express start` prints, one JSON line per delivery.
const verdicts: Record<string, string> = {
  processed: 'signature verified, first time seen: handler ran',
  duplicate: 'signature verified, already done: handler skipped',
  'in-progress': 'already running elsewhere: try later',
  unauthorized: 'signature rejected',
};
const dim = (text: string) => (process.stdout.isTTY ? `\x1b[2m${text}\x1b[22m` : text);
const narrate = (line: string) => {
  const r = JSON.parse(line) as DeliveryReport;
  if (!('outcome' in r)) return;
  if (r.source === 'reconcile') {
    // A reconcile run passes every known event through the store; only what it recovers is news.
    if (r.outcome === 'processed') say(`      shop ⟲ ${r.event} ${r.reference}: recovered by reconcile, handler ran`);
    return;
  }
  say(`      shop ← ${r.event ?? 'webhook'} ${r.reference ?? ''}: ${verdicts[r.outcome] ?? r.outcome} (${r.status})`);
  say(`        ${dim(line.trim())}`);
};
const shop = createShop({ ...process.env, ...env }, { logger: pino({ name: 'shop', level: 'debug' }, { write: narrate }) });
shopServer.on('request', createApp(shop));

const sandbox = (path: string, body?: unknown) =>
  fetch(`${serviceUrl}/_sandbox${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.PAYHOOK_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  }).then((r) => r.json());
const order = async (merchantReference: string): Promise<Order> => (await fetch(`${shopUrl}/orders/${merchantReference}`)).json();
const checkout = async (merchantReference: string, amount: string) => {
  const res = await fetch(`${shopUrl}/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount, currencyCode: 'ETB', customerPhone: '0911234567', merchantReference }),
  });
  return (await res.json()) as { reference: string; checkoutUrl: string };
};
const attempts = (reference: string) =>
  service
    .deliveries({ reference })
    .flatMap((d) => d.attempts.map((a) => `${d.event}: ${a.status ?? a.error}`))
    .join(', ');

say(`payhook demo: the reference service at ${serviceUrl}, the Express shop at ${shopUrl}`);
say(
  `The service signs each webhook in ${SIGNATURE_HEADER}, as ePay does; the shop's receiver reads that header (signatureHeader: EPAY_SIGNATURE_HEADER).\n`,
);

say('1. A customer checks out order-1001 for 1500.00 ETB');
const first = await checkout('order-1001', '1500.00');
say(`   shop → service: initialize → ${first.reference}, checkout at ${first.checkoutUrl}`);
say('   the customer pays; the service sends payment.success');
await sandbox(`/transactions/${first.reference}/pay`);
await service.clock.advance(0);
check((await order('order-1001')).events.join() === 'payment.success', 'order-1001 is paid: events [payment.success]');

say('\n2. The service delivers the next webhook twice (a duplicate), for a refund');
await sandbox('/faults', { type: 'duplicate', times: 1, reference: first.reference });
await sandbox(`/transactions/${first.reference}/refund`);
await service.clock.advance(0);
say('   the refund completes');
await sandbox(`/transactions/${first.reference}/complete-refund`);
await service.clock.advance(0);
const refunded = await order('order-1001');
check(
  refunded.events.join() === 'payment.success,payment.refunding,payment.refunded',
  `each event ran once: [${refunded.events.join(', ')}]`,
);

say('\n3. The shop goes down; the customer of order-1002 pays meanwhile');
const second = await checkout('order-1002', '320.50');
shopServer.close();
shopServer.closeAllConnections();
await sandbox(`/transactions/${second.reference}/pay`);
await service.clock.advance(0);
say('   +1 minute (virtual): the service retries');
await service.clock.advance(MINUTE);
say(`   attempts so far: ${attempts(second.reference)}`);
say('   the shop comes back; +2 minutes: the next retry');
await new Promise<void>((r) => shopServer.listen(shopAt, '127.0.0.1', r));
await service.clock.advance(2 * MINUTE);
say(`   attempts: ${attempts(second.reference)}`);
check((await order('order-1002')).events.join() === 'payment.success', 'order-1002 is paid after the outage: events [payment.success]');

say('\n4. A webhook is lost altogether (order-1003); a reconcile run finds it through the API');
const third = await checkout('order-1003', '75.00');
await sandbox('/faults', { type: 'drop', reference: third.reference });
await sandbox(`/transactions/${third.reference}/pay`);
await service.clock.advance(0);
check((await order('order-1003')).events.length === 0, 'the shop never heard of the payment');
const background = createClient({ apiKey: env.PAYHOOK_API_KEY, baseUrl: serviceUrl, priority: 'background' });
const now = service.clock.now();
const run = await createReconciler({ client: background, receiver: shop.receiver }).run({
  from: new Date(now - 60 * MINUTE),
  to: new Date(now),
});
say(
  `   reconcile: scanned ${run.scanned} transactions, recovered ${run.recovered.map((r) => `${r.event} ${r.reference}`).join(', ') || 'nothing'}`,
);
check((await order('order-1003')).events.join() === 'payment.success', 'order-1003 is paid: events [payment.success]');
const again = await createReconciler({ client: background, receiver: shop.receiver }).run({
  from: new Date(now - 60 * MINUTE),
  to: new Date(now),
});
check(again.recovered.length === 0, 'a second reconcile run recovers nothing: every event ran exactly once');
const answered = service.deliveries().filter((d) => d.attempts.some((a) => a.status === 200));
check(
  answered.length > 0 && answered.every((d) => d.signatureHeader === EPAY_SIGNATURE_HEADER),
  `every webhook the shop answered came signed in ${SIGNATURE_HEADER} (${answered.length} deliveries)`,
);

const stop = async () => {
  shopServer.close();
  shopServer.closeAllConnections();
  await closeService();
  service.close();
  await shop.close();
};
if (failures.length > 0) {
  console.error(`\n[payhook demo] ${failures.length} step(s) did not go as expected: ${failures.join('; ')}`);
  process.exitCode = 1;
}
if (keep && failures.length === 0) {
  const aheadMs = service.clock.now() - Date.now();
  keepServing(
    {
      serviceUrl,
      shopUrl,
      apiKey: env.PAYHOOK_API_KEY,
      webhookSecret: env.PAYHOOK_WEBHOOK_SECRET,
      boardPassword: env.PAYHOOK_BOARD_PASSWORD,
      aheadMs,
      stop,
    },
    say,
  );
} else {
  if (failures.length === 0) keepHint(say);
  await stop();
}

/** A `--<name> <port>` flag, or the default; 0 picks a free port. */
function port(name: 'service-port' | 'shop-port', fallback: number): number {
  const given = args[name];
  if (given === undefined) return fallback;
  const n = Number(given);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    console.error(`[payhook demo] --${name} ${given} is not a port: give a number from 0 to 65535 (0 picks a free one).`);
    process.exit(2);
  }
  return n;
}

/** Listen, or stop with what to do when the port is taken. */
async function listenOn(server: http.Server, at: number, flag: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(at, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => taken(error, at, flag));
}

function taken(error: unknown, at: number, flag: string): never {
  if ((error as { code?: string }).code !== 'EADDRINUSE') throw error;
  console.error(
    `[payhook demo] port ${at} on 127.0.0.1 is in use (another demo still running?): stop what uses it, or pick another with --${flag} <port> (0 picks a free one).`,
  );
  process.exit(1);
}
