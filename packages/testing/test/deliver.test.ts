import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, memoryStore, type Clock, type DeliveryReport, type Receiver } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { payhookExpress } from '@payhook/express';
import { payhookFastify } from '@payhook/fastify';
import { payhookHono } from '@payhook/hono';
import { payhookNext } from '@payhook/next';
import {
  createEvent,
  createEvents,
  deliver,
  manualClock,
  payhookMatchers,
  recordRuns,
  signedRequest,
  type DeliveryTarget,
} from '@payhook/testing';

expect.extend(payhookMatchers);

const secret = 'whsec_deliver_tests';
const SCHEDULE = [0, 60_000, 180_000, 420_000, 900_000];

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A receiver whose handlers record every run and count their effects; `onReport` sees every outcome. */
function app(
  options: {
    budgetMs?: number;
    handler?: (n: number) => unknown;
    clock?: Clock;
    onReport?: (r: DeliveryReport) => void;
    onInProgress?: 'wait' | 'retry';
  } = {},
) {
  const runs = recordRuns();
  const effects: string[] = [];
  let n = 0;
  const report = (_level: string, r: object) => void ('outcome' in r && options.onReport?.(r as DeliveryReport));
  const { clock } = options;
  const receiver = createReceiver({
    secret,
    store: memoryStore({ now: clock?.now }),
    logger: report,
    budgetMs: options.budgetMs,
    onInProgress: options.onInProgress,
    clock,
  }).onAny(
    runs.track(async (event) => {
      await options.handler?.(++n);
      effects.push(`${event.event} ${event.reference}`);
    }),
  );
  return { receiver, runs, effects };
}

async function serveNode(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise((r) => (server.closeAllConnections(), server.close(r))));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

type Kind = 'url' | 'express' | 'node listener' | 'fastify' | 'hono' | 'next route' | 'fetch handler';
const kinds: Kind[] = ['url', 'express', 'node listener', 'fastify', 'hono', 'next route', 'fetch handler'];

async function targetFor(kind: Kind, receiver: Receiver): Promise<DeliveryTarget> {
  switch (kind) {
    case 'url':
      return serveNode(toNodeListener(receiver));
    case 'express': {
      const a = express();
      a.all('/webhooks', payhookExpress(receiver));
      return a;
    }
    case 'node listener':
      return toNodeListener(receiver);
    case 'fastify': {
      const a = Fastify();
      await a.register(payhookFastify, { receiver });
      cleanups.push(() => a.close());
      return a;
    }
    case 'hono': {
      const a = new Hono();
      a.all('/webhooks', payhookHono(receiver));
      return a;
    }
    case 'next route':
      return payhookNext(receiver);
    case 'fetch handler':
      return (request: Request) => receiver.handle(request);
  }
}

describe('deliver to every kind of target', () => {
  for (const kind of kinds) {
    it(`${kind}: five concurrent duplicates give one effect`, async () => {
      // The run holds until the four copies were refused, so all five overlap. The copies are refused
      // at once ('retry'): waiting copies ('wait', duplicate-wait.test.ts) give up only near their
      // budget, which raced the held run's own budget to a 202 on a loaded machine.
      let refused = 0;
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const onReport = (r: DeliveryReport) => void (r.outcome === 'in-progress' && ++refused === 4 && release());
      const { receiver, runs, effects } = app({ handler: () => held, onReport, onInProgress: 'retry' });
      const event = createEvent('payment.success');
      const result = await deliver(await targetFor(kind, receiver), event, { secret, duplicates: 5, concurrency: 5 });

      expect(result.deliveries).toHaveLength(5);
      expect(result).toHaveBeenDelivered();
      expect(effects).toEqual([`payment.success ${event.reference}`]);
      await expect({ receiver, runs }).toHaveProcessedExactlyOnce(event);
      // The first wave: exactly one copy was processed; the rest were refused (409) or answered as duplicates.
      const first = result.attempts.filter((a) => a.number === 1).map((a) => a.outcome);
      expect(first.filter((o) => o === 'processed')).toHaveLength(1);
      expect(first.every((o) => ['processed', 'in-progress', 'duplicate'].includes(o!))).toBe(true);
      // Copies refused with 409 were retried a virtual minute later, and answered as duplicates.
      for (const a of result.attempts.filter((x) => x.number === 2))
        expect(a).toMatchObject({ at: 60_000, status: 200, outcome: 'duplicate' });
    });
  }

  it('sends the same bytes and signature on every copy and attempt', async () => {
    const seen: { body: string; signature: string | undefined }[] = [];
    const url = await serveNode((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ body, signature: req.headers['x-service-signature'] as string | undefined });
        res.writeHead(seen.length < 4 ? 503 : 204).end();
      });
    });
    const event = createEvent('payment.failed');
    const result = await deliver(url, event, { secret, duplicates: 2 });
    expect(result.statuses).toEqual([503, 503, 503, 204, 204]);
    expect(new Set(seen.map((s) => JSON.stringify(s))).size).toBe(1);
    expect(JSON.parse(seen[0]!.body)).toEqual(event);
    expect(seen[0]!.signature).toBe(result.deliveries[0]!.signature);
  });
});

describe('signatureHeader', () => {
  it('signs in the header a receiver set up for ePay reads, and that receiver processes it', async () => {
    const runs: string[] = [];
    const receiver = createReceiver({ secret, signatureHeader: 'X-Epay-Signature' }).onAny((e) => void runs.push(e.reference));
    const names: string[][] = [];
    const listener = toNodeListener(receiver);
    const url = await serveNode((req, res) => {
      names.push(Object.keys(req.headers).filter((h) => h.endsWith('-signature')));
      listener(req, res);
    });
    const event = createEvent('payment.success');
    const result = await deliver(url, event, { secret, signatureHeader: 'X-Epay-Signature' });
    expect(names).toEqual([['x-epay-signature']]);
    expect([result.statuses, runs]).toEqual([[200], [event.reference]]);
    expect(() => signedRequest(createEvent('payment.success'), { secret, signatureHeader: 'not a header' })).toThrow(
      /signatureHeader must be an HTTP header name/,
    );
  });
});

describe('the retry schedule, on a virtual clock', () => {
  it('a receiver that fails the first 4 attempts is processed on the 5th, at +1, +2, +4, +8 minutes', async () => {
    const { receiver, runs, effects } = app({
      handler: (n) => {
        if (n <= 4) throw new Error(`database down (run ${n})`);
      },
    });
    const event = createEvent('payment.success');
    const started = performance.now();
    const result = await deliver(receiver.handle, event, { secret });

    expect(performance.now() - started).toBeLessThan(5_000); // fifteen virtual minutes, no real waiting
    expect(result.attempts.map((a) => [a.number, a.at, a.status, a.outcome])).toEqual([
      [1, 0, 500, 'failed'],
      [2, 60_000, 500, 'failed'],
      [3, 180_000, 500, 'failed'],
      [4, 420_000, 500, 'failed'],
      [5, 900_000, 200, 'processed'],
    ]);
    expect(result).toHaveBeenDelivered();
    expect(runs.of(event.reference).map((r) => [r.attempt, r.redelivery, r.result])).toEqual([
      [1, false, 'threw'],
      [2, true, 'threw'],
      [3, true, 'threw'],
      [4, true, 'threw'],
      [5, true, 'ok'],
    ]);
    expect(effects).toHaveLength(1);
    await expect(receiver).toHaveProcessedExactlyOnce(event);
  });

  it('gives up after the 5th attempt, as the service does', async () => {
    const { receiver } = app({
      handler: () => {
        throw new Error('always down');
      },
    });
    const event = createEvent('payment.success');
    const result = await deliver(receiver, event, { secret });
    expect(result.statuses).toEqual([500, 500, 500, 500, 500]);
    expect(result.attempts.map((a) => a.at)).toEqual(SCHEDULE);
    expect(result.deliveries[0]).toMatchObject({ state: 'failed' });
    expect(result.delivered).toBe(false);
    expect(result).not.toHaveBeenDelivered();
    await expect(receiver).not.toHaveProcessedExactlyOnce(event);
  });

  it('tells the app how far the virtual clock moved, and takes other schedules', async () => {
    const steps: number[] = [];
    const down = () => new Response(null, { status: 503 });
    await deliver(down, createEvent('payment.success'), { secret, onAdvance: (ms) => void steps.push(ms) });
    expect(steps).toEqual([60_000, 120_000, 240_000, 480_000]);

    const once = await deliver(down, createEvent('payment.success'), { secret, retrySchedule: false });
    expect(once.attempts.map((a) => [a.at, a.status])).toEqual([[0, 503]]);
    const custom = await deliver(down, createEvent('payment.success'), { secret, retrySchedule: [1_000, 5_000] });
    expect(custom.attempts.map((a) => a.at)).toEqual([0, 1_000, 6_000]);
  });

  it('counts no answer within the timeout, and a connection error, as failed attempts with no status', async () => {
    // deliver's timeout is real time (a real socket may hang): this waits 2 x 50 ms for real.
    const hung = () => new Promise<Response>(() => {});
    const timedOut = await deliver(hung, createEvent('payment.success'), { secret, timeoutMs: 50, retrySchedule: [60_000] });
    expect(timedOut.attempts.map((a) => [a.at, a.status, a.error])).toEqual([
      [0, null, 'timed out: no answer within 50 ms'],
      [60_000, null, 'timed out: no answer within 50 ms'],
    ]);

    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = await deliver(`http://127.0.0.1:${port}/webhooks`, createEvent('payment.success'), { secret, retrySchedule: false });
    expect(refused.attempts[0]).toMatchObject({ status: null, error: expect.stringMatching(/^connection error: /) });
  });
});

describe('slow handlers and ordering', () => {
  it('a slow handler gets 202; it finishes afterwards and is processed once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let running!: () => void;
    const started = new Promise<void>((r) => (running = r));
    const clock = manualClock(0);
    const { receiver, runs } = app({ budgetMs: 50, clock, handler: () => (running(), gate) });
    const event = createEvent('payment.success');

    let answered = false;
    const delivering = deliver(receiver.handle, event, { secret }).finally(() => (answered = true));
    await started;
    await clock.advance(49);
    expect(answered).toBe(false);
    await clock.advance(1); // answered at the budget, on the receiver's clock, while the handler still runs
    const result = await delivering;
    expect(result.attempts).toEqual([expect.objectContaining({ status: 202, outcome: 'accepted' })]);
    expect(result).toHaveBeenDelivered(); // a 202 is a 2xx: the service will not retry it
    await expect(receiver).not.toHaveProcessedExactlyOnce(event); // still claimed while it runs

    release();
    await runs.settled();
    await expect({ receiver, runs }).toHaveProcessedExactlyOnce(event);
    const again = await deliver(receiver.handle, event, { secret });
    expect(again.attempts[0]).toMatchObject({ status: 200, outcome: 'duplicate' });
  });

  it('a refund delivered before its success: each handler runs when its event arrives; neither is dropped', async () => {
    const { receiver, runs } = app();
    const [paid, refunded] = createEvents(['payment.success', 'payment.refunded']);
    const result = await deliver(receiver, [paid, refunded], { secret, reorder: 'reverse' });
    expect(result.attempts.map((a) => [a.event, a.status, a.outcome])).toEqual([
      ['payment.refunded', 200, 'processed'],
      ['payment.success', 200, 'processed'],
    ]);
    // payhook does not reorder: the handlers ran in arrival order, each once (dedupe is per event).
    expect(runs.list.map((r) => r.event)).toEqual(['payment.refunded', 'payment.success']);
    await expect(runs).toHaveProcessedExactlyOnce(paid);
    await expect(runs).toHaveProcessedExactlyOnce(refunded);
  });

  it('shuffles deterministically by seed', async () => {
    const events = createEvents(['payment.success', 'payment.refunding', 'payment.refunded']);
    const ok = () => new Response(null, { status: 200 });
    const order = async (seed: number) =>
      (await deliver(ok, events, { secret, duplicates: 2, reorder: 'shuffle', seed })).attempts.map((a) => `${a.event}#${a.copy}`);
    const a = await order(7);
    expect(await order(7)).toEqual(a);
    expect([...a].sort()).toEqual(events.flatMap((e) => [`${e.event}#1`, `${e.event}#2`]).sort());
    const others = await Promise.all([1, 2, 3, 4, 5].map(order));
    expect(others.some((o) => JSON.stringify(o) !== JSON.stringify(a))).toBe(true);
  });

  it('delivers raw bytes unchanged (a body that is not an event gets 400 and is retried like any non-2xx)', async () => {
    const { receiver, runs } = app();
    const result = await deliver(receiver, '{"event":"payment.success"}', { secret, retrySchedule: false });
    expect(result.attempts[0]).toMatchObject({ status: 400, outcome: 'invalid', event: 'payment.success' });
    expect(runs.list).toEqual([]);
  });
});

describe('mistakes are explained', () => {
  it('says what to do', async () => {
    const event = createEvent('payment.success');
    const ok = () => new Response(null);
    await expect(deliver(ok, event, {} as { secret: string })).rejects.toThrow(/^\[@payhook\/testing\] deliver needs \{ secret \}/);
    await expect(deliver(ok, event, { secret, duplicates: 0 })).rejects.toThrow(
      /^\[@payhook\/testing\] deliver: duplicates must be a whole number/,
    );
    await expect(deliver(ok, [], { secret })).rejects.toThrow(/^\[@payhook\/testing\] deliver: pass at least one event/);
    await expect(deliver(Promise.resolve(ok) as never, event, { secret })).rejects.toThrow(
      /^\[@payhook\/testing\] the target is a Promise: await it/,
    );
    await expect(deliver({} as never, event, { secret })).rejects.toThrow(/^\[@payhook\/testing\] unknown target/);
    await expect(deliver('not a url', event, { secret })).rejects.toThrow(
      /^\[@payhook\/testing\] the target "not a url" is not an absolute URL/,
    );
    await expect(deliver(ok, event, { secret, retrySchedule: [-1] })).rejects.toThrow(
      /^\[@payhook\/testing\] deliver: retrySchedule must be/,
    );
  });
});
