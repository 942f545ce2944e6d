// Timing for bench/core.mjs: rows in mitata passes (median over rounds), and a CPU-time cross-check.
import { bench, run, do_not_optimize } from 'mitata';

export function median(xs) {
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}

export const fmtNs = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);
export const fmtOps = (ns) => Math.round(1e9 / ns).toLocaleString('en-US');

/**
 * Rows `{ key, fn, async }`, all registered afresh and run in one mitata pass per round; a row's
 * figures are the medians over the rounds of mitata's mean, p50 and p99 per iteration (ns).
 * `beforeRound` runs before each pass (re-signing the timestamped peers).
 */
export async function measureRows(rows, rounds, beforeRound = () => {}) {
  const samples = Object.fromEntries(rows.map((r) => [r.key, []]));
  for (let round = 0; round < rounds; round++) {
    beforeRound();
    for (const { key, fn, async } of rows) {
      bench(key, async ? async () => do_not_optimize(await fn()) : () => do_not_optimize(fn()));
    }
    const { benchmarks } = await run({ format: 'quiet', throw: true });
    for (const b of benchmarks) samples[b.alias].push(b.runs[0].stats);
    process.stderr.write(`[bench] round ${round + 1}/${rounds} done\n`);
  }
  const out = {};
  for (const { key } of rows) {
    const s = samples[key];
    const med = (f) => median(s.map(f));
    out[key] = { avg: med((x) => x.avg), p50: med((x) => x.p50), p99: med((x) => x.p99), rounds: s.map((x) => x.avg) };
  }
  return out;
}

/**
 * CPU time per iteration (ns): the rows interleaved in chunks of `per` iterations, timed with
 * process.cpuUsage (time the process actually ran, so a busy neighbour inflates it far less than
 * wall time); the median of the chunks.
 */
export async function cpuTimeCheck(rows, { chunks = 40, per = 1500 } = {}) {
  const out = Object.fromEntries(rows.map((r) => [r.key, []]));
  for (let c = 0; c < chunks; c++) {
    for (const { key, fn, async } of rows) {
      const t0 = process.cpuUsage();
      if (async) for (let i = 0; i < per; i++) await fn();
      else for (let i = 0; i < per; i++) fn();
      const t = process.cpuUsage(t0);
      out[key].push(((t.user + t.system) * 1000) / per);
    }
  }
  return Object.fromEntries(rows.map((r) => [r.key, median(out[r.key])]));
}
