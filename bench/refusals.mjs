// What a stranger's refused delivery costs (issue 30). Two parts, each printed; it measures, never asserts.
//
// 1. CPU per refused delivery, in process (`process`, what the adapters call), for bodies up to
//    maxBodyBytes under a well-formed wrong signature header:
//      plain    a receiver with no ledger whose diagnosis budget is spent: verify, then 401
//      refused  the defaults a merchant runs: a memory ledger recording the refusal, budget spent
//      hinted   every refusal diagnosed (its budget never spent): the bounded transforms alone
//      recorded every refusal diagnosed and recorded in the memory ledger (both budgets never spent)
//    CPU time (process.cpuUsage) per delivery, the rows interleaved in chunks.
// 2. The flood: a receiver on toNodeListener in a child process; 24 connections post 7 KB nested
//    arrays under well-formed wrong signatures for FLOOD_SECONDS while honest signed deliveries
//    arrive 20 a second. Prints the honest deliveries' p50, p99 and max, how many took over 10 s,
//    and the server's CPU per request and RSS.
//
//   pnpm --filter @payhook/core build && node bench/refusals.mjs      (FLOOD_SECONDS=15 by default)
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import { median } from './lib/measure.mjs';
import { root } from './lib/report.mjs';
import { loadCore } from './lib/load-core.mjs';

const dist = path.join(root, 'packages/core/dist');
const core = await loadCore(dist);
const { adapterOf } = await import(pathToFileURL(path.join(dist, 'adapter.js')).href);
const SECRET = 'whsec_bench_refusals';
const WRONG = `sha256=${'5a'.repeat(32)}`;
const silent = () => {};

const event = JSON.stringify({
  event: 'payment.success',
  mode: 'sandbox',
  reference: 'ref_bench_0001',
  merchantReference: 'order-1',
  amount: '1500.00',
  serviceFee: '52.50',
  currency: 'ETB',
  status: 'completed',
  paymentMethod: 'telebirr',
  paidAt: '2026-11-26T05:46:42.396Z',
  createdAt: '2026-11-26T05:46:00.273Z',
  customer: { name: 'Abebe Kebede', email: 'abebe@example.com', phone: '251911234567' },
});
const jsonOf = (bytes) =>
  JSON.stringify({ items: Array.from({ length: Math.ceil(bytes / 40) }, (_, i) => ({ id: i, note: 'x'.repeat(24) })) }).slice(
    0,
    bytes - 2,
  ) + '}';
const bodies = {
  'event, 0.3 KB': event,
  'nested arrays, 7 KB': `${'['.repeat(3500)}${']'.repeat(3500)}`,
  'JSON, 64 KiB': jsonOf(64 * 1024),
  'JSON, 1 MiB (maxBodyBytes)': jsonOf(1024 * 1024),
};

// 1. ------------------------------------------------------------------------ CPU per refusal
/** A clock that stands still (the diagnosis budget, once spent, stays spent) or leaps a minute a call (never spent). */
const clockAt = (leap) => {
  let t = Date.UTC(2026, 10, 26);
  return { now: () => (leap ? (t += 60_000) : t), setTimeout: core.systemClock.setTimeout, clearTimeout: core.systemClock.clearTimeout };
};
// BENCH_BEFORE=<a checkout's packages/core/dist> adds the same receiver built from another commit (32b8e03, before issue 30).
const before = process.env.BENCH_BEFORE && (await loadCore(process.env.BENCH_BEFORE));
const beforeAdapter = before && (await import(pathToFileURL(path.join(process.env.BENCH_BEFORE, 'adapter.js')).href));
const rows = {
  plain: () => core.createReceiver({ secret: SECRET, logger: silent, clock: clockAt(false) }),
  refused: () =>
    core.createReceiver({ secret: SECRET, logger: silent, clock: clockAt(false), store: core.memoryStore({ ledger: true, warn: false }) }),
  hinted: () => core.createReceiver({ secret: SECRET, logger: silent, clock: clockAt(true) }),
  recorded: () =>
    core.createReceiver({ secret: SECRET, logger: silent, clock: clockAt(true), store: core.memoryStore({ ledger: true, warn: false }) }),
  ...(before && {
    before: () =>
      Object.assign(before.createReceiver({ secret: SECRET, logger: silent, store: before.memoryStore({ ledger: true, warn: false }) }), {
        old: true,
      }),
  }),
};

/** CPU time per delivery of each row: 10 rounds, each row running for about CHUNK_MS of wall time per round, interleaved. */
const CHUNK_MS = 150;
async function cpuPerRefusal(body) {
  const processes = Object.fromEntries(
    Object.entries(rows).map(([k, make]) => {
      const receiver = make().onAny(silent);
      return [k, (receiver.old ? beforeAdapter.adapterOf : adapterOf)(receiver).process];
    }),
  );
  const delivery = { method: 'POST', signature: WRONG, body: typeof body === 'string' ? new TextEncoder().encode(body) : body };
  const samples = Object.fromEntries(Object.keys(rows).map((k) => [k, []]));
  // Warm up, and spend the budgets of the standing clocks.
  for (const p of Object.values(processes)) for (let i = 0; i < 10; i++) await p(delivery);
  for (let round = 0; round < 10; round++) {
    for (const [k, p] of Object.entries(processes)) {
      const start = process.cpuUsage();
      const until = performance.now() + CHUNK_MS;
      let n = 0;
      do {
        const r = await p(delivery);
        if (r.status !== 401) throw new Error(`[bench] ${k}: ${r.status}`);
        n++;
      } while (performance.now() < until);
      const used = process.cpuUsage(start);
      samples[k].push(((used.user + used.system) * 1000) / n);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, median(s)]));
}

const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`);
console.log(`node ${process.version}; CPU time per refused delivery (median of 10 interleaved chunks)`);
const beforeHead = before ? ' before (32b8e03, defaults) | before/plain |' : '';
console.log(
  `| body | plain 401 | refused (defaults, memory ledger) | refused/plain | examined every time (no budget) | examined/plain | examined and recorded every time | recorded/plain |${beforeHead}`,
);
console.log(`|---|---|---|---|---|---|---|---|${before ? '---|---|' : ''}`);
for (const [name, body] of Object.entries(bodies)) {
  const r = await cpuPerRefusal(body);
  const old = before ? ` ${fmt(r.before)} | ${(r.before / r.plain).toFixed(1)}x |` : '';
  console.log(
    `| ${name} | ${fmt(r.plain)} | ${fmt(r.refused)} | ${(r.refused / r.plain).toFixed(2)}x | ${fmt(r.hinted)} | ${(r.hinted / r.plain).toFixed(2)}x | ${fmt(r.recorded)} | ${(r.recorded / r.plain).toFixed(2)}x |${old}`,
  );
}

// 2. ------------------------------------------------------------------------ the flood
const FLOOD_SECONDS = Number(process.env.FLOOD_SECONDS ?? 15);
const child = spawn(process.execPath, [fileURLToPath(new URL('./lib/refusal-server.mjs', import.meta.url))], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
});
const port = await new Promise((resolve) => child.once('message', (m) => resolve(m.port)));
const url = `http://127.0.0.1:${port}/webhooks`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
const honest = [];
let sent = 0;
const deliverHonest = () =>
  new Promise((resolve) => {
    const body = event.replace('ref_bench_0001', `ref_honest_${sent++}`);
    const started = performance.now();
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'x-service-signature': core.sign(body, SECRET), 'content-type': 'application/json' } },
      (res) => {
        res.resume().on('end', () => {
          honest.push({ ms: performance.now() - started, status: res.statusCode });
          resolve();
        });
      },
    );
    req.on('error', () => resolve(honest.push({ ms: Infinity, status: 0 })));
    req.end(body);
  });
const cpuBefore = await ask('cpu');
const nested = `${'['.repeat(3500)}${']'.repeat(3500)}`;
const flood = autocannon({
  url,
  connections: 24,
  duration: FLOOD_SECONDS,
  method: 'POST',
  headers: { 'x-service-signature': WRONG, 'content-type': 'application/json' },
  body: nested,
});
const pending = [];
const ticker = setInterval(() => pending.push(deliverHonest()), 50);
const result = await flood;
clearInterval(ticker);
await Promise.all(pending);
const cpuAfter = await ask('cpu');
child.kill();
agent.destroy();

function ask(what) {
  return new Promise((resolve) => {
    child.once('message', resolve);
    child.send(what);
  });
}
const ms = honest.map((h) => h.ms).sort((a, b) => a - b);
const q = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))];
const requests = result.requests.total + honest.length;
console.log(
  `\nflood: 24 connections, 7 KB nested arrays, well-formed wrong signature, ${FLOOD_SECONDS} s; honest deliveries 20/s on their own connections`,
);
console.log(
  `refused: ${result.requests.total.toLocaleString('en-US')} (${Math.round(result.requests.average)}/s; answers other than 401: ${result.requests.total - result['4xx']}, errors ${result.errors})`,
);
const counts = new Map();
for (const h of honest) counts.set(h.status, (counts.get(h.status) ?? 0) + 1);
const statuses = [...counts].map(([status, n]) => `${n} x ${status}`).join(', ');
console.log(
  `honest: ${honest.length} (${statuses}); p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, max ${ms.at(-1).toFixed(1)} ms; over 10 s: ${ms.filter((x) => x > 10_000).length}`,
);
console.log(
  `server: ${(((cpuAfter.cpu - cpuBefore.cpu) / requests) * 1000).toFixed(1)} µs CPU per request, RSS ${(cpuAfter.rss / 2 ** 20).toFixed(0)} MiB`,
);
