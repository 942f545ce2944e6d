import http from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { createReceiver, type Receiver } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { payhookExpress } from '@payhook/express';
import { payhookFastify } from '@payhook/fastify';
import { payhookHono } from '@payhook/hono';
import { payhookNext, payhookPages } from '@payhook/next';
import { MAX_BODY } from '@payhook/test-support/hostile-bodies';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { type Case, SECRET } from './cases.js';
import type { Answer } from './oracle.js';
import { fromResponse, keepAlive, serve, toRequest, viaAgent } from './senders.js';

/** The receivers under fuzz (test/security/fuzz/): one per adapter, each counting its handler's runs. */

export interface Counted {
  receiver: Receiver;
  /** Handler runs since the last reset. */
  calls: number;
  /** Handler runs that threw (answered 500 `failed`). */
  threw: number;
  /** Handler runs per event, by the service's identity of an event: mode, reference and name. */
  runs: Map<string, number>;
}

export const eventKey = (e: { mode: string; reference: string; event: string }) => `${e.mode}:${e.reference}:${e.event}`;

function counted(): Counted {
  const c: Counted = { receiver: undefined as unknown as Receiver, calls: 0, threw: 0, runs: new Map() };
  // Nothing here is ever in progress when the receiver works (one delivery at a time, handlers that
  // return at once); if a refused copy left its event claimed, the next delivery gets 409 at once
  // instead of waiting out the 8 s budget for each example fast-check tries.
  const options = { secret: SECRET, maxBodyBytes: MAX_BODY, onInProgress: 'retry', logger: { warn() {}, error() {} } } as const;
  c.receiver = createReceiver(options).onAny((event) => {
    c.calls++;
    c.runs.set(eventKey(event), (c.runs.get(eventKey(event)) ?? 0) + 1);
    if (event.merchantReference === 'throw') {
      c.threw++;
      throw new Error('planned handler failure');
    }
  });
  return c;
}

export interface Target {
  name: string;
  counted: Counted;
  /** In process (or over one kept-alive connection): most of the cases. */
  inProcess?: (c: Case) => Promise<Answer>;
  /** A real server for raw sockets. */
  port?: number;
  close?: () => Promise<void>;
}

/**
 * Every adapter's receiver, in process and on a live server on 127.0.0.1 (the Next App Router
 * handler in process only); `close` stops the servers and the kept-alive connection.
 */
export async function startTargets(): Promise<{ targets: Record<string, Target>; close(): Promise<void> }> {
  const targets: Record<string, Target> = {};
  // core: receiver.handle(Request), and its Node bridge on a real server.
  const core = counted();
  const coreServer = await serve(http.createServer(toNodeListener(core.receiver)));
  targets.core = {
    name: 'core',
    counted: core,
    inProcess: async (c) => fromResponse(await core.receiver.handle(toRequest(c))),
    ...coreServer,
  };

  // Hono: app.fetch in process; on a socket through @hono/node-server, as the example serves it.
  const hono = counted();
  const honoApp = new Hono();
  honoApp.all('/webhooks', payhookHono(hono.receiver));
  const honoServer = await serve(http.createServer(getRequestListener(honoApp.fetch)));
  targets.hono = { name: 'hono', counted: hono, inProcess: async (c) => fromResponse(await honoApp.fetch(toRequest(c))), ...honoServer };

  // Fastify: inject in process; listen for sockets.
  const fastify = counted();
  const fastifyApp = Fastify();
  await fastifyApp.register(payhookFastify, { receiver: fastify.receiver, path: '/webhooks' });
  const address = await fastifyApp.listen({ port: 0, host: '127.0.0.1' });
  targets.fastify = {
    name: 'fastify',
    counted: fastify,
    inProcess: async (c) => {
      const headers: Record<string, string | string[]> = {};
      for (const [n, v] of c.headers) {
        const had = headers[n.toLowerCase()];
        headers[n.toLowerCase()] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
      }
      const method = c.method.toUpperCase() as 'POST' | 'GET' | 'PUT' | 'PATCH' | 'DELETE';
      const res = await fastifyApp.inject({ method, url: '/webhooks', headers, payload: method === 'GET' ? undefined : c.body });
      return { status: res.statusCode, text: res.body };
    },
    port: Number(new URL(address).port),
    close: () => fastifyApp.close(),
  };

  // Express: a live server, one kept-alive connection for the bulk, fresh sockets for the rest.
  const ex = counted();
  const expressApp = express();
  expressApp.all('/webhooks', payhookExpress(ex.receiver));
  expressApp.use(express.json());
  const expressServer = await serve(http.createServer(expressApp));
  targets.express = { name: 'express', counted: ex, inProcess: (c) => viaAgent(expressServer.port, c), ...expressServer };

  // Next: the App Router handler in process (a web Request, as Next passes it); the Pages Router
  // handler on a live Node server (Next's pages API hands it Node's req and res).
  const nextApp = counted();
  const { POST, GET, PUT, PATCH, DELETE } = payhookNext(nextApp.receiver);
  const byMethod: Record<string, (r: Request) => Promise<Response>> = { POST, GET, PUT, PATCH, DELETE };
  targets['next app router'] = {
    name: 'next app router',
    counted: nextApp,
    inProcess: async (c) => fromResponse(await byMethod[c.method.toUpperCase()]!(toRequest(c))),
  };
  const pages = counted();
  const pagesServer = await serve(http.createServer(payhookPages(pages.receiver)));
  targets['next pages router'] = {
    name: 'next pages router',
    counted: pages,
    inProcess: (c) => viaAgent(pagesServer.port, c),
    ...pagesServer,
  };
  return {
    targets,
    async close() {
      keepAlive.destroy();
      for (const t of Object.values(targets)) await t.close?.();
    },
  };
}
