// Before bench/core.mjs times anything: every contender gives the right answer on the payloads
// (payhook processes, deduplicates and rejects a wrong signature; the peers return the event and
// reject a wrong signature), and every row's handler runs once per delivery.
import { Webhooks } from '@octokit/webhooks';
import { SECRET, STORE_MAX, ROWS, makeContenders } from './contenders.mjs';
import { payloadFor } from './payload.mjs';

export async function selfCheck(modules, d) {
  const { core, adapter } = modules;
  const fail = (what) => {
    throw new Error(`[bench] self-check: ${what}`);
  };
  for (let i = 0; i < d.bodies.length; i++) {
    if (!core.paymentEventSchema.safeParse(JSON.parse(d.strings[i])).success) fail(`payload ${i} does not pass paymentEventSchema`);
    if (core.sign(d.bodies[i], SECRET) !== d.signatures[i]) fail('core sign() disagrees with createHmac');
  }

  const receiver = core.createReceiver({ secret: SECRET, store: core.memoryStore({ max: STORE_MAX }), logger: { warn() {} } });
  const { process } = adapter.adapterOf(receiver.on('payment.success', () => {}));
  for (let i = 0; i < 8; i++) {
    const r = await process({ method: 'POST', signature: d.signatures[i], body: d.bodies[i] });
    if (r.report.outcome !== 'processed') fail(`payhook outcome ${r.report.outcome}, expected processed`);
  }
  if ((await process({ method: 'POST', signature: d.signatures[0], body: d.bodies[0] })).report.outcome !== 'duplicate')
    fail('the memory store does not deduplicate');
  if ((await process({ method: 'POST', signature: d.signatures[1], body: d.bodies[0] })).status !== 401)
    fail('payhook accepted a wrong signature');

  if (modules.otel && !modules.otel.missing) {
    // The telemetry option is taken: record() runs once per delivery (else processOtelNoop would measure nothing).
    const otel = modules.otel.openTelemetry();
    let recorded = 0;
    const telemetry = { record: (r, now) => void (recorded++, otel.record(r, now)) };
    const withOtel = adapter.adapterOf(
      core.createReceiver({ secret: SECRET, store: core.memoryStore({ max: STORE_MAX }), telemetry }).on('payment.success', () => {}),
    );
    const r = await withOtel.process({ method: 'POST', signature: d.signatures[0], body: d.bodies[0] });
    if (r.report.outcome !== 'processed' || recorded !== 1)
      fail(`with openTelemetry(): outcome ${r.report.outcome}, telemetry recorded ${recorded} time(s), expected processed and 1`);
  }

  const webhooks = new Webhooks({ secret: SECRET, log: { debug() {}, info() {}, warn() {}, error() {} } });
  let seen = 0;
  webhooks.on('payment.success', () => void seen++);
  await webhooks.verifyAndReceive({ id: d.ids[0], name: 'payment.success', payload: d.strings[0], signature: d.signatures[0] });
  if (seen !== 1) fail('the Octokit handler did not run');
  const rejected = await webhooks
    .verifyAndReceive({ id: d.ids[0], name: 'payment.success', payload: d.strings[0], signature: d.signatures[1] })
    .then(
      () => false,
      () => true,
    );
  if (!rejected) fail('Octokit accepted a wrong signature');

  if (modules.peers) {
    const { Stripe, Svix } = modules.peers;
    const t = Math.floor(Date.now() / 1000);
    const stripe = new Stripe('sk_test_payhook_bench');
    const header = (i) => stripe.webhooks.generateTestHeaderString({ payload: d.strings[i], secret: 'whsec_x', timestamp: t });
    if (stripe.webhooks.constructEvent(d.bodies[0], header(0), 'whsec_x').reference !== payloadFor(0).reference)
      fail('stripe did not return the event');
    if (!throws(() => stripe.webhooks.constructEvent(d.bodies[0], header(1), 'whsec_x'))) fail('stripe accepted a wrong signature');
    const svix = new Svix('whsec_' + Buffer.from('payhook-bench-self-check-secret!').toString('base64'));
    const headers = (i) => ({
      'svix-id': 'msg_1',
      'svix-timestamp': String(t),
      'svix-signature': svix.sign('msg_1', new Date(t * 1000), d.strings[i]),
    });
    if (svix.verify(d.bodies[0], headers(0)).reference !== payloadFor(0).reference) fail('svix did not return the event');
    if (!throws(() => svix.verify(d.bodies[0], headers(1)))) fail('svix accepted a wrong signature');
  }

  // Every row once, on its own counters: the handler ran.
  const c = makeContenders(modules, d);
  for (const [name, row] of Object.entries(ROWS)) {
    if ((name === 'stripe' || name === 'svix') && !modules.peers) continue;
    if (name === 'processOtelNoop' && (!modules.otel || modules.otel.missing)) continue;
    const fn = c[name](name);
    await (row.async ? fn() : Promise.resolve(fn()));
    if (c.counts[name].handled !== 1) fail(`the ${name} row's handler did not run`);
  }
}

function throws(fn) {
  try {
    fn();
    return false;
  } catch {
    return true;
  }
}
