import http from 'node:http';
import express5 from 'express';
import express4 from 'express4';
import { payhookExpress, type PayhookExpressRequest } from '@payhook/express';
import { adapterConformance } from './adapter-conformance.js';
import { listen } from './http.js';
import { scenarioReceiver } from './next-app/lib/scenario.js';

for (const [name, express] of [
  ['express 5', express5],
  ['express 4', express4],
] as const) {
  const serve = async (logFile: string, parser?: 'plain' | 'keeping bytes', signatureHeader?: string) => {
    const app = express();
    if (parser === 'plain') app.use(express.json());
    const keep = (req: PayhookExpressRequest, _res: unknown, buf: Buffer) => void (req.rawBody = buf);
    if (parser === 'keeping bytes') app.use(express.json({ verify: keep }));
    app.post('/echo', (req, res) => void res.json({ parsed: req.body }));
    app.all('/webhooks', payhookExpress(scenarioReceiver(logFile, signatureHeader)));
    const served = await listen(http.createServer(app), '/webhooks');
    return { ...served, echoUrl: served.url.replace(/\/webhooks$/, '/echo') };
  };
  adapterConformance(name, {
    start: (logFile, signatureHeader) => serve(logFile, undefined, signatureHeader),
    platform: (logFile) => {
      // A router mounted under the account: Express strips the mount path from req.url, not from req.originalUrl.
      const app = express();
      const hooks = express.Router({ mergeParams: true });
      hooks.post('/', payhookExpress(scenarioReceiver(logFile, undefined, true)));
      app.use('/webhooks/epay/:account', hooks);
      return listen(http.createServer(app), '/webhooks/epay');
    },
    parserFirst: {
      start: (logFile) => serve(logFile, 'plain'),
      expect: { fix: /^\[@payhook\/express\] a body parser already parsed the request.*before express\.json\(\)/ },
    },
    keepingBytes: (logFile) => serve(logFile, 'keeping bytes'),
  });
}
