// The ledger's cost on the pipeline (issue 18): payhook's `process` on the memory store with the
// ledger off and on, in one process, the rows interleaved in each mitata round, and the same again
// with 64 deliveries in flight at once (the writer then appends them in batches). Prints the
// deliveries per second of each and the ratio; it measures, never asserts.
//
//   pnpm --filter @payhook/core build && node bench/ledger.mjs      (BENCH_ROUNDS=5 by default)
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeContenders } from './lib/contenders.mjs';
import { fmtNs, fmtOps, measureRows } from './lib/measure.mjs';
import { root } from './lib/report.mjs';
import { loadCore } from './lib/load-core.mjs';

const dist = path.join(root, 'packages/core/dist');
const core = await loadCore(dist);
const adapter = await import(pathToFileURL(path.join(dist, 'adapter.js')).href);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const c = makeContenders({ core, adapter });

/** `fn` 64 times at once: one iteration is a burst of concurrent deliveries. */
const burst = (fn) => () => Promise.all(Array.from({ length: 64 }, fn));
const rows = [
  { key: 'off', fn: c.process('off'), async: true },
  { key: 'on', fn: c.processLedger('on'), async: true },
  { key: 'off x64', fn: burst(c.process('offBurst')), async: true },
  { key: 'on x64', fn: burst(c.processLedger('onBurst')), async: true },
];
const r = await measureRows(rows, rounds);
const line = (off, on, per) => {
  const ratio = r[on].avg / r[off].avg;
  console.log(
    `${off.padEnd(8)} ${fmtNs(r[off].avg / per).padStart(10)} ${fmtOps(r[off].avg / per).padStart(9)}/s | ` +
      `${on.padEnd(7)} ${fmtNs(r[on].avg / per).padStart(10)} ${fmtOps(r[on].avg / per).padStart(9)}/s | ledger on: ${((1 / ratio) * 100).toFixed(1)}% of the throughput off`,
  );
};
console.log(`node ${process.version}, ${rounds} rounds, medians of mitata's means`);
line('off', 'on', 1);
line('off x64', 'on x64', 64);
for (const [name, n] of Object.entries(c.counts))
  if (n.handled !== n.calls) throw new Error(`[bench] ${name}: ${n.handled} runs for ${n.calls} deliveries`);
