// The matrix app on node:http through core's Node bridge, as CommonJS: require() takes core's CJS build.
const http = require('node:http');
const { createReceiver } = require('@payhook/core');
const { toNodeListener } = require('@payhook/core/node');

// matrix-app.mjs is ESM; the same receiver, written out for require().
const runs = new Map();
const receiver = createReceiver({ secret: 'whsec_runtime_matrix', budgetMs: 300, logger: { info() {}, warn() {}, error() {} } }).on(
  'payment.success',
  async (event) => {
    const run = runs.get(event.reference) ?? { started: 0, finished: 0 };
    runs.set(event.reference, run);
    run.started++;
    if (event.merchantReference.startsWith('slow-')) await new Promise((resolve) => setTimeout(resolve, 1_000));
    run.finished++;
  },
);
const webhooks = toNodeListener(receiver);
const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (!url.pathname.endsWith('/runs')) return webhooks(req, res);
  const run = runs.get(url.searchParams.get('reference')) ?? { started: 0, finished: 0 };
  const record = (await receiver.store.get(url.searchParams.get('key') ?? '')) ?? null;
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...run, record }));
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port} node ${process.version} cjs`));
