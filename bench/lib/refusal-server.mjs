// The server of bench/refusals.mjs's flood: the README's plain-Node setup with the defaults a
// merchant runs (memory store with a ledger). Says its port over IPC, and answers 'cpu' with its
// CPU time (ms) and RSS.
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from './report.mjs';
import { loadCore } from './load-core.mjs';

const dist = path.join(root, 'packages/core/dist');
const core = await loadCore(dist);
const { toNodeListener } = await import(pathToFileURL(path.join(dist, 'node.js')).href);
const receiver = core
  .createReceiver({ secret: 'whsec_bench_refusals', logger: () => {}, store: core.memoryStore({ ledger: true, warn: false }) })
  .on('payment.success', async () => {
    await new Promise((resolve) => setImmediate(resolve));
  });
const server = http.createServer({ connectionsCheckingInterval: 1_000 }, toNodeListener(receiver));
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', () => {
  const { user, system } = process.cpuUsage();
  process.send({ cpu: (user + system) / 1000, rss: process.memoryUsage().rss });
});
