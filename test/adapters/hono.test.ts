import http from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { payhookHono } from '@payhook/hono';
import { adapterConformance } from './adapter-conformance.js';
import { listen, serveFetch } from './http.js';
import { scenarioReceiver } from './next-app/lib/scenario.js';

/** Hono as a web-standard fetch handler (Bun, Deno, workers), or on Node through @hono/node-server. */
const serve = async (logFile: string, runtime: 'fetch' | 'node-server', jsonFirst = false, signatureHeader?: string) => {
  const app = new Hono();
  // What a validator does: read the JSON body before the route runs.
  if (jsonFirst) app.use('*', async (c, next) => void (await c.req.json().catch(() => undefined), await next()));
  app.post('/echo', async (c) => c.json({ parsed: await c.req.json() }));
  app.all('/webhooks', payhookHono(scenarioReceiver(logFile, signatureHeader)));
  const served =
    runtime === 'fetch'
      ? await serveFetch(app.fetch, '/webhooks')
      : await listen(http.createServer(getRequestListener(app.fetch)), '/webhooks');
  return { ...served, echoUrl: served.url.replace(/\/webhooks$/, '/echo') };
};

for (const runtime of ['fetch', 'node-server'] as const) {
  adapterConformance(`hono (${runtime})`, {
    start: (logFile, signatureHeader) => serve(logFile, runtime, false, signatureHeader),
    platform: (logFile) => {
      const app = new Hono();
      app.post('/webhooks/epay/:account', payhookHono(scenarioReceiver(logFile, undefined, true)));
      return runtime === 'fetch'
        ? serveFetch(app.fetch, '/webhooks/epay')
        : listen(http.createServer(getRequestListener(app.fetch)), '/webhooks/epay');
    },
    parserFirst: {
      start: (logFile) => serve(logFile, runtime, true),
      expect: { fix: /^\[@payhook\/hono\] the request stream was already read.*before any validator.*c\.req\.json\(\)/ },
    },
  });
}
