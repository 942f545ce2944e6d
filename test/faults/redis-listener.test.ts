import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createReceiver } from '@payhook/core';
import { redisStore } from '@payhook/store-redis';
import { createEvent, signedRequest } from '@payhook/testing';
import { REDIS_URL, requireRedis } from '@payhook/test-support/services';
import { sleep } from '@payhook/test-support/wait';
import { tcpProxy } from '@payhook/test-support/servers/tcp-proxy';

/**
 * The connection the Redis store listens on for finished deliveries goes silent (a partition that
 * never gives its connections back), while copies wait for their running event. It never errors by
 * itself: without the store's PING the copies would miss the message and answer 409 at their
 * budget. Only that connection goes through the proxy; the store's commands go straight to Redis.
 */
const SECRET = 'whsec_redis_listener';
const url = await requireRedis();

describe.skipIf(!url)('Redis store: its listening connection silenced while copies wait', () => {
  const target = new URL(REDIS_URL);
  let proxy: Awaited<ReturnType<typeof tcpProxy>>;
  const client = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 1_000, socketTimeout: 1_000 });
  afterAll(async () => {
    client.disconnect();
    await proxy?.close();
  });

  it('notices within its timeout, listens again on a new connection, and the copies answer duplicate', async () => {
    proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    // The store makes its listening connection with client.duplicate(): that one goes through the proxy.
    client.duplicate = (() => new Redis(proxy.url(REDIS_URL), client.options)) as typeof client.duplicate;
    const store = redisStore({
      client,
      prefix: `payhook-listener-${randomUUID().slice(0, 8)}:`,
      commandTimeoutMs: 1_000,
      retentionMs: 60_000,
    });
    const receiver = createReceiver({ secret: SECRET, store, logger: { warn() {}, error() {} } });
    let runs = 0;
    receiver.on('payment.success', async () => {
      runs += 1;
      // Real time: Redis and the proxy run on their own clocks.
      await sleep(3_500);
    });
    const event = createEvent('payment.success', { reference: `listener_${randomUUID().slice(0, 8)}` });
    const first = receiver.handle(signedRequest(event, { secret: SECRET }));
    await sleep(200);
    const copies = Array.from({ length: 20 }, () => receiver.handle(signedRequest(event, { secret: SECRET })));
    await sleep(500);
    expect(proxy.open(), 'the listening connection, through the proxy').toBe(1);
    // Silent for ever, as a forgotten NAT entry; connections made from now on work.
    proxy.blackhole();
    proxy.restore();
    const answers: Record<string, number> = {};
    for (const r of [await first, ...(await Promise.all(copies))]) {
      const a = `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
      answers[a] = (answers[a] ?? 0) + 1;
    }
    expect(answers).toEqual({ '200 processed': 1, '200 duplicate': 20 });
    expect(runs).toBe(1);
    await store.close();
  }, 30_000);
});
