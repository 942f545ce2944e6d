// The first delivery in a fresh process (issue 54): each contender runs in a new Node process,
// and times from its script's first line to a verified delivery, imports included. The rounds are
// interleaved (every contender once per round, in a shuffled order), and the medians of one run
// are compared, so a busy machine slows every row alike.
//
//   node bench/cold-start.mjs [--rounds 15] [--write]
//
// Rows: the floor (node:crypto's HMAC and JSON.parse), @octokit/webhooks' verifyAndReceive, svix's
// verify, stripe's webhooks.constructEvent, payhook's verifySignature from its own entry, and
// payhook's createReceiver plus a first signed delivery (memory store): given the bytes and the
// header, as Octokit is and as the Node adapters (Express, Fastify, the Node bridge) give them
// (`adapterOf(receiver).process`), and through `handle(new Request(...))`, whose Request Node
// builds from undici the first time one is made (the `requestAlone` row: Node's cost, not payhook's).
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { payloadFor } from './lib/payload.mjs';
import { coreBuild, load, machine, writeSection } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '15' }, write: { type: 'boolean', default: false } } });
const rounds = Number(values.rounds);

const body = JSON.stringify(payloadFor(1));
const secret = 'whsec_cold_start_benchmark_secret';
const hex = createHmac('sha256', secret).update(body).digest('hex');
// Stripe's and svix's own header formats over the same body, made here so no contender signs its own.
const stamp = Math.floor(Date.now() / 1000);
const stripeHeader = `t=${stamp},v1=${createHmac('sha256', secret).update(`${stamp}.${body}`).digest('hex')}`;
const svixSecret = `whsec_${Buffer.from(secret).toString('base64')}`;
const svixSig = createHmac('sha256', Buffer.from(secret)).update(`msg_1.${stamp}.${body}`).digest('base64');

// Every script starts its clock on its first line; `import()` keeps the imports after it.
const start = 'const t0 = performance.now();';
const end = (check) => `if (!(${check})) throw new Error('not verified'); process.stdout.write(String(performance.now() - t0));`;
const ROWS = {
  floor: `${start}
    const { createHmac, timingSafeEqual } = await import('node:crypto');
    const want = Buffer.from(createHmac('sha256', S).update(B).digest('hex'));
    const ok = timingSafeEqual(want, Buffer.from(H)) && JSON.parse(B).event === 'payment.success';
    ${end('ok')}`,
  octokit: `${start}
    const { Webhooks } = await import('@octokit/webhooks');
    const webhooks = new Webhooks({ secret: S });
    let seen = false;
    webhooks.onAny(() => { seen = true; });
    await webhooks.verifyAndReceive({ id: '1', name: 'ping', payload: B, signature: 'sha256=' + H });
    ${end('seen')}`,
  svix: `${start}
    const { Webhook } = await import('svix');
    const event = new Webhook(SVIX).verify(B, { 'svix-id': 'msg_1', 'svix-timestamp': String(T), 'svix-signature': 'v1,' + SVIX_SIG });
    ${end("event.event === 'payment.success'")}`,
  stripe: `${start}
    const { default: Stripe } = await import('stripe');
    const event = new Stripe('sk_test_cold').webhooks.constructEvent(B, STRIPE_HEADER, S);
    ${end("event.event === 'payment.success'")}`,
  verifySignature: `${start}
    const { verifySignature } = await import(VERIFY_ENTRY);
    const v = verifySignature(B, 'sha256=' + H, S);
    ${end("v.ok && JSON.parse(B).event === 'payment.success'")}`,
  createReceiver: `${start}
    const [{ createReceiver }, { adapterOf }] = await Promise.all([import('@payhook/core'), import('@payhook/core/adapter')]);
    let seen = false;
    const receiver = createReceiver({ secret: S, logger: () => {} }).on('payment.success', () => { seen = true; });
    const r = await adapterOf(receiver).process({ method: 'POST', signature: 'sha256=' + H, body: Buffer.from(B) });
    ${end('seen && r.status === 200')}`,
  handleRequest: `${start}
    const { createReceiver } = await import('@payhook/core');
    let seen = false;
    const receiver = createReceiver({ secret: S, logger: () => {} }).on('payment.success', () => { seen = true; });
    const res = await receiver.handle(new Request('http://localhost/webhooks', { method: 'POST', body: B, headers: { 'x-service-signature': 'sha256=' + H } }));
    ${end('seen && res.status === 200')}`,
  requestAlone: `${start}
    const text = await new Request('http://localhost/webhooks', { method: 'POST', body: B, headers: { 'x-service-signature': 'sha256=' + H } }).text();
    ${end('text === B')}`,
};

const verifyEntry = process.env.PAYHOOK_VERIFY_ENTRY ?? '@payhook/core/verify';
const prelude = [
  `const S = ${JSON.stringify(secret)}, B = ${JSON.stringify(body)}, H = ${JSON.stringify(hex)}, T = ${stamp};`,
  `const SVIX = ${JSON.stringify(svixSecret)}, SVIX_SIG = ${JSON.stringify(svixSig)}, STRIPE_HEADER = ${JSON.stringify(stripeHeader)};`,
  `const VERIFY_ENTRY = ${JSON.stringify(verifyEntry)};`,
].join('\n');

function once(name) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `${prelude}\n${ROWS[name]}`], { cwd: here, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`[bench] cold-start row ${name} failed:\n${r.stderr}`);
  return Number(r.stdout);
}

const shuffled = (xs) =>
  xs
    .map((x) => [Math.random(), x])
    .sort((a, b) => a[0] - b[0])
    .map(([, x]) => x);
const names = Object.keys(ROWS);
const times = Object.fromEntries(names.map((n) => [n, []]));
for (const n of names) once(n); // the disk cache warm for every row, untimed
for (let i = 0; i < rounds; i++) for (const n of shuffled(names)) times[n].push(once(n));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const m = Object.fromEntries(names.map((n) => [n, median(times[n])]));
const x = (v) => `${v.toFixed(2)}x`;
const HEADING = '## Cold start: the first delivery in a fresh process';
const lines = [
  HEADING,
  '',
  `Measured by \`node bench/cold-start.mjs --rounds ${rounds}\` on ${new Date().toISOString().slice(0, 10)}: Node ${process.version}, ${machine()},`,
  `load average at the end ${load()}; core: ${coreBuild(path.join(here, '../packages/core/dist'))}. Fresh processes,`,
  `${rounds} interleaved rounds (every row once per round, shuffled), medians. Time from the script's first line to a verified`,
  'delivery, imports included; the ratios are the figures to read, the milliseconds move with the machine.',
  '',
  '| row | median ms | / Octokit |',
  '|---|---:|---:|',
  ...names.map((n) => `| ${n} | ${m[n].toFixed(1)} | ${x(m[n] / m.octokit)} |`),
  '',
  `- createReceiver + first delivery / Octokit verifyAndReceive: **${x(m.createReceiver / m.octokit)}** (target <= 2x)`,
  `- verifySignature (${verifyEntry}) / Octokit: **${x(m.verifySignature / m.octokit)}** (target <= 1.5x)`,
  `- both ahead of svix (${m.svix.toFixed(1)} ms) and stripe (${m.stripe.toFixed(1)} ms): ${m.createReceiver < m.svix && m.createReceiver < m.stripe && m.verifySignature < m.svix && m.verifySignature < m.stripe ? 'yes' : '**no**'}`,
];
console.log(lines.join('\n'));
if (values.write) writeSection(HEADING, lines.join('\n'));
