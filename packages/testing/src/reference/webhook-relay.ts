import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResolvedTarget, TargetOptions } from '../targets/target.js';

/**
 * The reference service's callback URL in a test: the service needs it at start, while the app
 * it should reach usually exists only later. Every webhook is forwarded to the current target.
 */
export interface WebhookRelay {
  /** `http://127.0.0.1:<port>/webhooks`; a merchant account's is `<callbackUrl>/<id>`. */
  readonly callbackUrl: string;
  /**
   * Forward to `next` from now on; the previous target is closed. `route` is the target's webhook
   * route (`routeOf`): what the relay got below `/webhooks` goes below it.
   */
  setTarget(next: ResolvedTarget, route?: string): Promise<void>;
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
  let route = '/webhooks';
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
          const path = forwardPath(route, req.url ?? '');
          const response = await target.send({ method: req.method ?? 'POST', path, headers, body: Buffer.concat(chunks) });
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
    async setTarget(next, nextRoute = '/webhooks') {
      const previous = target;
      target = next;
      route = nextRoute;
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

/**
 * The webhook route of a target: a URL target's own path and query, else the `path` option
 * (default `/webhooks`).
 *
 * @example
 * routeOf('http://127.0.0.1:3000/webhooks/epay', {}); // '/webhooks/epay'
 */
export function routeOf(target: unknown, options: TargetOptions): string {
  if (typeof target === 'string' || target instanceof URL) {
    const url = new URL(target);
    return url.pathname + url.search;
  }
  return options.path ?? '/webhooks';
}

/**
 * Where a webhook the relay got at `requestUrl` goes on the target: at `/webhooks` itself, the
 * target's route (undefined: the target knows it); below it (a merchant account's
 * `/webhooks/shop-a`), the same below the route (`/webhooks/epay/shop-a`).
 */
function forwardPath(route: string, requestUrl: string): string | undefined {
  const got = new URL(requestUrl, 'http://relay.invalid');
  if (!got.pathname.startsWith('/webhooks/')) return undefined;
  const base = new URL(route, 'http://relay.invalid');
  return `${base.pathname.replace(/\/+$/, '')}${got.pathname.slice('/webhooks'.length)}${base.search || got.search}`;
}
