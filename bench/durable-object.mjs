// The Durable Object store's throughput on workerd: events per second at 1 and 32 in flight, where
// an event is one claim and one complete made inside a Worker (two subrequests to the Durable
// Object), reached from this process over Miniflare's loopback socket. Prints a table; nothing is
// written (BENCHMARKS.md's figures are copied from it by hand).
//
//   pnpm build && node bench/durable-object.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const runtimes = join(import.meta.dirname, '..', 'test', 'runtimes');
const fromRuntimes = createRequire(join(runtimes, 'package.json'));
const out = mkdtempSync(join(tmpdir(), 'payhook-bench-do-'));
try {
  execFileSync(
    process.execPath,
    [
      fromRuntimes.resolve('wrangler/bin/wrangler.js'),
      'deploy',
      '--dry-run',
      '--outdir',
      join(out, 'dist'),
      '--config',
      join(runtimes, 'do-worker', 'wrangler.toml'),
    ],
    {
      env: { ...process.env, XDG_CONFIG_HOME: join(out, 'config'), WRANGLER_SEND_METRICS: 'false', CI: '1' },
      stdio: 'ignore',
    },
  );
  const { Miniflare } = await import(fromRuntimes.resolve('miniflare'));
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(out, 'dist', 'worker.js'),
    modulesRoot: join(out, 'dist'),
    compatibilityDate: '2026-04-20',
    durableObjects: { PAYHOOK_STORE: { className: 'PayhookStoreObject', useSQLite: true } },
    host: '127.0.0.1',
    port: 0,
  });
  const origin = await mf.ready;
  const run = crypto.randomUUID().slice(0, 8);
  let n = 0;
  const measure = async (concurrency, store = 'durable-object') => {
    let events = 0;
    const until = performance.now() + SECONDS * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < until) {
          const response = await fetch(new URL(`/event?store=${store}&key=bench-${run}-${n++}`, origin), { method: 'POST' });
          if (!response.ok) throw new Error(`bench: the Worker answered ${response.status} ${await response.text()}`);
          await response.arrayBuffer();
          events++;
        }
      }),
    );
    return events / ((performance.now() - started) / 1000);
  };
  await measure(8);
  for (const store of ['durable-object', 'memory']) {
    for (const concurrency of [1, 32]) {
      console.log(
        `| ${store} (in the Worker) | ${concurrency} | ${Math.round(await measure(concurrency, store)).toLocaleString('en-US')} |`,
      );
    }
  }
  await mf.dispose();
} finally {
  rmSync(out, { recursive: true, force: true });
}
