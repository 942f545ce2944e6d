// The matrix app on node:http through core's Node bridge, as an ESM module.
import http from 'node:http';
import { toNodeListener } from '@payhook/core/node';
import { matrixReceiver, runsAnswer, upstashFrom } from './matrix-app.mjs';

const app = matrixReceiver(upstashFrom(process.env));
const webhooks = toNodeListener(app.receiver);
const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (!url.pathname.endsWith('/runs')) return webhooks(req, res);
  const answer = await runsAnswer(app, url);
  res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port} node ${process.version} esm`));
