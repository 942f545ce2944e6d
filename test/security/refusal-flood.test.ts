import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, memoryStore, sign } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { createEvent } from '@payhook/testing';

/**
 * Issue 30: 24 connections sending 7 KB nested arrays under a well-formed wrong signature made
 * every refusal cost 344 ms of CPU in the signature diagnosis, and 20 of 20 honest deliveries
 * missed the service's 10 s. Here the same flood, bounded (24 x 25 requests), against the
 * README's plain-Node server on the defaults, with 20 honest deliveries sent during it. The
 * latency figures of a longer flood are in BENCHMARKS.md (bench/refusals.mjs).
 */
const SECRET = 'whsec_refusal_flood';
const NESTED = `${'['.repeat(3500)}${']'.repeat(3500)}`;
const WRONG = `sha256=${'7c'.repeat(32)}`;

function post(port: number, agent: http.Agent, body: string, signature: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/webhooks',
        method: 'POST',
        agent,
        headers: { 'x-service-signature': signature, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume().on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('a flood of nested bodies under well-formed wrong signatures', () => {
  let runs = 0;
  const receiver = createReceiver({ secret: SECRET, logger: () => {}, store: memoryStore({ ledger: true, warn: false }) }).on(
    'payment.success',
    () => void (runs += 1),
  );
  const server = http.createServer(toNodeListener(receiver));
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

  it('leaves honest deliveries their answers: every one 200 and none near the 10 s, every stranger a bare 401', async () => {
    const floodAgent = new http.Agent({ keepAlive: true, maxSockets: 24 });
    const honestAgent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const flood = Promise.all(
      Array.from({ length: 24 }, async () => {
        const statuses: number[] = [];
        for (let i = 0; i < 25; i++) statuses.push((await post(port, floodAgent, NESTED, WRONG)).status);
        return statuses;
      }),
    );
    const honest: Promise<{ status: number; ms: number }>[] = [];
    for (let i = 0; i < 20; i++) {
      const body = JSON.stringify(createEvent('payment.success'));
      honest.push(post(port, honestAgent, body, sign(body, SECRET)));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [refused, answered] = await Promise.all([flood, Promise.all(honest)]);
    floodAgent.destroy();
    honestAgent.destroy();
    expect(new Set(refused.flat())).toEqual(new Set([401]));
    expect(refused.flat()).toHaveLength(600);
    expect(answered.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(runs).toBe(20);
    const ms = answered.map((a) => a.ms).sort((a, b) => a - b);
    // Before the fix each refusal took a third of a second of CPU: the honest ones waited behind 600 of them.
    expect(ms.filter((x) => x >= 10_000)).toEqual([]);
    expect(ms[Math.floor(0.99 * ms.length)]).toBeLessThan(1_000);
  }, 60_000);
});
