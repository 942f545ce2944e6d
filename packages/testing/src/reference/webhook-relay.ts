import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResolvedTarget } from '../targets/target.js';

/**
 * The reference service's callback URL in a test: the service needs it at start, while the app
 * it should reach usually exists only later. Every webhook is forwarded to the current target.
 */
export interface WebhookRelay {
  /** `http://127.0.0.1:<port>/webhooks`. */
  readonly callbackUrl: string;
  /** Forward to `next` from now on; the previous target is closed. */
  setTarget(next: ResolvedTarget): Promise<void>;
  /** Stop the relay, then close the current target. */
  close(): Promise<void>;
}

/**
 * Start a relay on 127.0.0.1, port 0. Until a target is set it answers 503, and a target that
 * throws is answered 502, as the service would see an app that crashed.
 *
 * @example
 * const relay = await startWebhookRelay();
 * await relay.setTarget(await resolveTarget(app));
 * // ...merchants: [{ callbackUrl: relay.callbackUrl, ... }]
 * await relay.close();
 */
export async function startWebhookRelay(): Promise<WebhookRelay> {
  let target: ResolvedTarget | undefined;
  const relay = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (!target) {
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end('{"error":"[@payhook/testing] no app to deliver to: call ref.deliverTo(app) before moving a transaction"}');
          return;
        }
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (typeof value === 'string' && name !== 'host' && name !== 'connection' && name !== 'content-length') headers[name] = value;
        }
        try {
          const response = await target.send({ method: req.method ?? 'POST', headers, body: Buffer.concat(chunks) });
          const out: Record<string, string> = {};
          response.headers.forEach((value, name) => {
            if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection') out[name] = value;
          });
          res.writeHead(response.status, out);
          res.end(Buffer.from(await response.arrayBuffer()));
        } catch (error) {
          // What the service would see from an app that crashed: an error status.
          if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ error: `[@payhook/testing] the target failed: ${error instanceof Error ? error.message : String(error)}` }),
          );
        }
      })();
    });
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    callbackUrl: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/webhooks`,
    async setTarget(next) {
      const previous = target;
      target = next;
      await previous?.close();
    },
    async close() {
      await new Promise<void>((resolve) => {
        relay.close(() => resolve());
        relay.closeAllConnections();
      });
      await target?.close();
    },
  };
}
