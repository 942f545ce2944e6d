// What a platform's refusals cost (issue 50): an account nobody knows must cost what a wrong
// signature costs, so that timing tells a stranger nothing about which accounts exist. It measures,
// never asserts. Two parts, each printed:
// 1. CPU time per refused delivery, in process (`process`, what the adapters call), under a
//    well-formed wrong signature header, the rows interleaved in chunks:
//      wrong signature   a known account (cached), a signature no secret of it matches
//      unknown account   a well-formed name `resolve` did not know (kept as unknown for a minute)
//      ill-formed name   a 10 KB name, refused before any lookup
//      one secret        a receiver with `secret`, the same wrong signature (the single-account 401)
// 2. Wall time per accepted delivery: `process` on a single-secret receiver against the same on a
//    platform's receiver, each delivery for a cached account (contenders' process, processAccounts),
//    interleaved. Instructions for the same rows: node bench/callgrind.mjs --rows process,processAccounts
//
//   pnpm --filter @payhook/core build && node bench/accounts.mjs
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './lib/measure.mjs';
import { root } from './lib/report.mjs';
import { loadCore } from './lib/load-core.mjs';
import { makeContenders } from './lib/contenders.mjs';
import { payloadFor } from './lib/payload.mjs';

const dist = path.join(root, 'packages/core/dist');
const core = await loadCore(dist);
const { adapterOf } = await import(pathToFileURL(path.join(dist, 'adapter.js')).href);
const SECRET = 'whsec_bench_accounts';
const WRONG = `sha256=${'5a'.repeat(32)}`;
const silent = () => {};
const body = new TextEncoder().encode(JSON.stringify(payloadFor(0)));
// A clock that stands still: the diagnosis budget (5 a minute), once spent, stays spent, as under a flood.
const t = Date.UTC(2026, 10, 28);
const clock = { now: () => t, setTimeout: core.systemClock.setTimeout, clearTimeout: core.systemClock.clearTimeout };
const platform = core.createReceiver({
  logger: silent,
  clock,
  accounts: { resolve: (name) => (name === 'acct_known' ? { secret: SECRET } : undefined) },
});
const single = core.createReceiver({ secret: SECRET, logger: silent, clock });
const onPlatform = adapterOf(platform.onAny(silent)).process;
const rows = {
  'wrong signature': () => onPlatform({ method: 'POST', signature: WRONG, body, account: 'acct_known' }),
  'unknown account': () => onPlatform({ method: 'POST', signature: WRONG, body, account: 'acct_nobody' }),
  'ill-formed name': () => onPlatform({ method: 'POST', signature: WRONG, body, account: 'a'.repeat(10_240) }),
  'one secret': (
    (p) => () =>
      p({ method: 'POST', signature: WRONG, body })
  )(adapterOf(single.onAny(silent)).process),
};

const CHUNK_MS = 150;
const ROUNDS = 15;
const samples = Object.fromEntries(Object.keys(rows).map((k) => [k, []]));
for (const run of Object.values(rows)) for (let i = 0; i < 2000; i++) await run();
for (let round = 0; round < ROUNDS; round++) {
  for (const [k, run] of Object.entries(rows)) {
    const start = process.cpuUsage();
    const until = performance.now() + CHUNK_MS;
    let n = 0;
    do {
      const r = await run();
      if (r.status !== 401) throw new Error(`[bench] ${k}: ${r.status}`);
      n++;
    } while (performance.now() < until);
    const used = process.cpuUsage(start);
    samples[k].push(((used.user + used.system) * 1000) / n);
  }
}
const ns = Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, median(s)]));
console.log(`node ${process.version}; CPU time per refused delivery, 0.6 KB body (median of ${ROUNDS} interleaved chunks)`);
console.log('| refusal | CPU per delivery | / wrong signature |');
console.log('|---|---:|---:|');
for (const [k, v] of Object.entries(ns)) console.log(`| ${k} | ${(v / 1e3).toFixed(2)} µs | ${(v / ns['wrong signature']).toFixed(2)}x |`);

// 2. ------------------------------------------------------------------------ an accepted delivery
const contenders = makeContenders({ core, adapter: { adapterOf } });
const accepted = { process: contenders.process('process'), processAccounts: contenders.processAccounts('processAccounts') };
const wall = Object.fromEntries(Object.keys(accepted).map((k) => [k, []]));
for (const run of Object.values(accepted)) for (let i = 0; i < 20_000; i++) await run();
for (let round = 0; round < ROUNDS; round++) {
  for (const [k, run] of Object.entries(accepted)) {
    const start = performance.now();
    const n = 20_000;
    for (let i = 0; i < n; i++) await run();
    wall[k].push(((performance.now() - start) * 1e6) / n);
  }
}
const w = Object.fromEntries(Object.entries(wall).map(([k, v]) => [k, median(v)]));
console.log(`\nWall time per accepted delivery, memory store (median of ${ROUNDS} interleaved rounds of 20,000)`);
console.log('| receiver | per delivery | / one secret |');
console.log('|---|---:|---:|');
console.log(`| one secret (\`process\`) | ${(w.process / 1e3).toFixed(2)} µs | 1.00x |`);
console.log(
  `| accounts, cached (\`processAccounts\`) | ${(w.processAccounts / 1e3).toFixed(2)} µs | ${(w.processAccounts / w.process).toFixed(2)}x |`,
);
