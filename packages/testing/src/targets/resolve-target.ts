import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeliveryTarget, FetchApp, FetchHandler, HandleApp, NodeListener, ResolvedTarget, TargetOptions } from './target.js';

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

const fn = (value: unknown, name: string) =>
  (typeof value === 'object' || typeof value === 'function') &&
  value !== null &&
  typeof (value as Record<string, unknown>)[name] === 'function';

/**
 * Make a target ready to send to. See `DeliveryTarget` for what is accepted and how each is reached.
 * Internal to deliver, connect and the reference service's relay.
 */
export async function resolveTarget(target: DeliveryTarget, options: TargetOptions = {}): Promise<ResolvedTarget> {
  const webhookPath = options.path ?? '/webhooks';
  if (!webhookPath.startsWith('/')) {
    throw new TypeError(`[@payhook/testing] path must start with "/" (e.g. "/webhooks"); got "${webhookPath}".`);
  }
  if (typeof target === 'string' || target instanceof URL) return urlTarget(target);
  if (fn(target, 'inject') && fn(target, 'register')) return injectTarget(target, webhookPath);
  // A Fastify instance is thenable too (`await app` waits for its plugins), so it is recognised first.
  if (isThenable(target)) {
    throw new TypeError('[@payhook/testing] the target is a Promise: await it first (e.g. `const app = await createApp(shop)`).');
  }
  // A receiver has `handle` and `onAny`; Express has `handle` and `use`.
  if (typeof target === 'object' && fn(target, 'handle') && fn(target, 'onAny')) {
    return inProcess((request) => (target as HandleApp).handle(request), webhookPath);
  }
  if (fn(target, 'fetch') || fn(target, 'POST')) {
    const handler: FetchHandler = fn(target, 'fetch')
      ? (request) => (target as FetchApp).fetch(request)
      : (request) => (target as unknown as Record<string, FetchHandler>)[request.method]?.(request) ?? new Response(null, { status: 405 });
    return inProcess(handler, webhookPath);
  }
  if (target instanceof http.Server || (fn(target, 'listen') && fn(target, 'address') && typeof target !== 'function')) {
    return serverTarget(target as http.Server, webhookPath);
  }
  if (typeof target === 'function') return functionTarget(target, webhookPath);
  throw new TypeError(
    '[@payhook/testing] unknown target: pass a URL, a fetch handler (request) => Response, a Node (req, res) listener or Express app, ' +
      'a Fastify instance, a Hono app, a payhook receiver, a Next route module { POST }, or a node:http Server.',
  );
}

/** A URL string or `URL`: real HTTP to exactly that URL, nothing to close. */
function urlTarget(target: string | URL): ResolvedTarget {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new TypeError(
      `[@payhook/testing] the target "${String(target)}" is not an absolute URL; pass e.g. "http://127.0.0.1:3000/webhooks", or the app itself.`,
    );
  }
  return overHttp('url', url, undefined, async () => {});
}

/** A Fastify instance, driven through `inject`: no port is opened, and its reply is turned into a web Response. */
function injectTarget(target: unknown, webhookPath: string): ResolvedTarget {
  const app = target as {
    inject(o: { method: string; url: string; headers: Record<string, string>; payload?: Buffer }): Promise<{
      statusCode: number;
      headers: Record<string, string | string[] | number | undefined>;
      rawPayload: Buffer;
    }>;
  };
  return {
    kind: 'inject',
    async send({ method, path, headers, body }) {
      const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? Buffer.from(body) : body);
      const res = await app.inject({ method, url: path ?? webhookPath, headers, payload });
      const out = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) out.append(name, String(v));
      }
      return new Response(NULL_BODY.has(res.statusCode) ? null : new Uint8Array(res.rawPayload), {
        status: res.statusCode,
        headers: out,
      });
    },
    close: async () => {},
  };
}

/** A `node:http` Server: its address when it listens (left open after), else 127.0.0.1:0 (closed after). */
async function serverTarget(server: http.Server, webhookPath: string): Promise<ResolvedTarget> {
  const address = server.address();
  if (address && typeof address === 'object') {
    const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
    const shown = host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
    return overHttp('server', new URL(`http://${shown}:${address.port}`), webhookPath, async () => {});
  }
  const base = await listenOnFreePort(server);
  return overHttp('server', base, webhookPath, () => closeServer(server));
}

/** A plain function: a Node listener (Express, or two or more parameters) served on a free port, else a fetch handler. */
async function functionTarget(target: FetchHandler | NodeListener, webhookPath: string): Promise<ResolvedTarget> {
  const express = fn(target, 'handle') && fn(target, 'use');
  if (express || target.length >= 2) {
    const server = http.createServer(target as NodeListener);
    const base = await listenOnFreePort(server);
    return overHttp('node', base, webhookPath, () => closeServer(server));
  }
  return inProcess(target as FetchHandler, webhookPath);
}

function overHttp(kind: 'url' | 'node' | 'server', base: URL, webhookPath: string | undefined, close: () => Promise<void>): ResolvedTarget {
  return {
    kind,
    origin: base.origin,
    async send({ method, path, headers, body, signal }) {
      const url = path === undefined ? (webhookPath === undefined ? base : new URL(webhookPath, base)) : new URL(path, base);
      return fetch(url, { method, headers, body: body as BodyInit | undefined, redirect: 'manual', signal });
    },
    close,
  };
}

async function listenOnFreePort(server: http.Server): Promise<URL> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function inProcess(handler: FetchHandler, webhookPath: string): ResolvedTarget {
  return {
    kind: 'fetch',
    async send({ method, path, headers, body, signal }) {
      const request = new Request(new URL(path ?? webhookPath, 'http://127.0.0.1'), {
        method,
        headers,
        body: body as BodyInit | undefined,
        signal,
      });
      const response = await handler(request);
      if (!(response instanceof Response)) {
        throw new TypeError(
          '[@payhook/testing] the fetch handler did not return a Response; return one (e.g. `receiver.handle(request)`).',
        );
      }
      return response;
    },
    close: async () => {},
  };
}
