import { Hono } from 'hono';
import { payhookHono } from '@payhook/hono';
import { adapterConformance } from './adapter-conformance.js';
import { serveFetch } from './http.js';
import { scenarioReceiver } from './next-app/lib/scenario.js';

const serve = async (logFile: string, jsonFirst = false) => {
  const app = new Hono();
  // What a validator does: read the JSON body before the route runs.
  if (jsonFirst) app.use('*', async (c, next) => void (await c.req.json().catch(() => undefined), await next()));
  app.post('/echo', async (c) => c.json({ parsed: await c.req.json() }));
  app.all('/webhooks', payhookHono(scenarioReceiver(logFile)));
  const served = await serveFetch(app.fetch, '/webhooks');
  return { ...served, echoUrl: served.url.replace(/\/webhooks$/, '/echo') };
};

adapterConformance('hono', {
  start: (logFile) => serve(logFile),
  parserFirst: {
    start: (logFile) => serve(logFile, true),
    expect: { fix: /^\[@payhook\/hono\] the request stream was already read.*before any validator.*c\.req\.json\(\)/ },
  },
});
