import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { payhookFastify } from '@payhook/fastify';
import { adapterConformance } from './adapter-conformance.js';
import { scenarioReceiver } from './next-app/lib/scenario.js';

// Our d.ts names 'fastify', which here is v5; in a Fastify 4 app it resolves to v4's types.
const fastify4AsTyped = fastify4 as unknown as typeof fastify5;
for (const [name, Fastify] of [
  ['fastify 5', fastify5],
  ['fastify 4', fastify4AsTyped],
] as const) {
  const serve = async (logFile: string, appParser = false, signatureHeader?: string) => {
    const app = Fastify();
    // The app's own JSON parser, at the root: the plugin must leave it alone outside its scope.
    if (appParser)
      app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, JSON.parse(String(body))));
    app.post('/echo', async (request) => ({ parsed: request.body }));
    await app.register(payhookFastify, { receiver: scenarioReceiver(logFile, signatureHeader) });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url: `${address}/webhooks`, echoUrl: `${address}/echo`, close: () => app.close() };
  };
  adapterConformance(name, {
    start: (logFile, signatureHeader) => serve(logFile, false, signatureHeader),
    parserFirst: { start: (logFile) => serve(logFile, true), expect: 'verifies' },
    platform: async (logFile) => {
      const app = Fastify();
      await app.register(payhookFastify, { receiver: scenarioReceiver(logFile, undefined, true), path: '/webhooks/epay/:account' });
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      return { url: `${address}/webhooks/epay`, close: () => app.close() };
    },
  });
}
