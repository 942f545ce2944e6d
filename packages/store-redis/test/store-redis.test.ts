import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { createReceiver } from '@payhook/core';
import { DEFAULT_RETENTION_MS } from '@payhook/core/store';
import { redisStore } from '@payhook/store-redis';
import { STORE_SCRIPTS } from '@payhook/store-redis/scripts';
import { createEvent, signedRequest } from '@payhook/testing';
import { storeConformance } from '@payhook/testing/store';
import { hasRedisServer, startRedis } from '@payhook/test-support/servers/redis-server';
import { requireRedis } from '@payhook/test-support/services';
import { countCommands, keySlot } from './redis-helpers.js';
import { sleep, until } from '@payhook/test-support/wait';

const url = await requireRedis();

describe.skipIf(!url)('redis', () => {
  storeConformance('redis', { make: () => redisStore({ url: url!, prefix: 'payhook-test:', retentionMs: 3_600_000 }), shared: true });

  describe('redis store specifics', () => {
    const redis = new Redis(url!);
    const prefix = `payhook-test-${randomUUID().slice(0, 8)}:`;
    const store = redisStore({ client: redis, prefix });
    afterAll(async () => {
      await store.close();
      // A client you pass stays yours: close() left it open.
      expect(redis.status).toBe('ready');
      redis.disconnect();
    });

    it('keeps both keys of a record in one Cluster slot, whatever the key holds', async () => {
      for (const key of ['sandbox:ref_1:payment.success', 'a}b{c', '{x}', 'ü€ ']) {
        const c = await store.claim(key, 5_000);
        expect(c.status).toBe('claimed');
        const keys = await redis.keys(`${prefix}*`);
        const mine = keys.filter((k) => k.startsWith(`${prefix}{${key}}:`));
        expect(mine.sort()).toEqual([`${prefix}{${key}}:lease`, `${prefix}{${key}}:rec`]);
        expect(keySlot(mine[0]!)).toBe(keySlot(mine[1]!));
      }
    });

    it('keeps done records for the retention, 30 days by default', async () => {
      const key = `ret-${randomUUID()}`;
      const c = await store.claim(key, 5_000);
      if (c.status !== 'claimed') throw new Error('expected a claim');
      await store.complete(key, c.token);
      const ttl = await redis.pttl(`${prefix}{${key}}:rec`);
      expect(ttl).toBeGreaterThan(DEFAULT_RETENTION_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(DEFAULT_RETENTION_MS);
      expect(await redis.exists(`${prefix}{${key}}:lease`)).toBe(0);

      const short = redisStore({ client: redis, prefix, retentionMs: 60_000 });
      const k2 = `ret-${randomUUID()}`;
      const c2 = await short.claim(k2, 5_000);
      if (c2.status !== 'claimed') throw new Error('expected a claim');
      await short.release(k2, c2.token);
      expect(await redis.pttl(`${prefix}{${k2}}:rec`)).toBeLessThanOrEqual(60_000);
    });

    it("holds a claim whose lease outlasts the retention to its end, extended or not (on the server's clock)", async () => {
      const short = redisStore({ client: redis, prefix, retentionMs: 200 });
      const [held, extended] = [`lease-${randomUUID()}`, `lease-${randomUUID()}`];
      const c = await short.claim(held, 1_500);
      const e = await short.claim(extended, 100);
      if (c.status !== 'claimed' || e.status !== 'claimed') throw new Error('expected two claims');
      expect(await short.extend(extended, e.token, 1_500)).toBe(true);
      await sleep(400); // real wait: past the 200 ms retention on Redis's clock, within the 1.5 s leases
      expect(await short.claim(held, 5_000)).toMatchObject({ status: 'in-progress' });
      expect(await short.claim(extended, 5_000)).toMatchObject({ status: 'in-progress' });
      expect(await short.get(held)).toMatchObject({ state: 'claimed', attempt: 1 });
      expect(await short.get(extended)).toMatchObject({ state: 'claimed', attempt: 1 });
    });

    it('answers a claim sent twice with its token as claimed both times (a retried request, a pipeline retried whole)', async () => {
      const key = `twice-${randomUUID()}`;
      const keys = [`${prefix}{${key}}:rec`, `${prefix}{${key}}:lease`];
      const claim = (token: string) => redis.eval(STORE_SCRIPTS.claim.lua, 2, ...keys, token, 5_000, 60_000);
      expect(await claim('token-a')).toEqual(['claimed', 1]);
      expect(await claim('token-a')).toEqual(['claimed', 1]);
      expect(((await claim('token-b')) as unknown[])[0]).toBe('in-progress');
    });

    it('uses one round trip per claim and one per complete', async () => {
      const commands = countCommands(redis);
      try {
        await store.claim(`warm-${randomUUID()}`, 1_000); // loads the script if Redis had not seen it
        const key = `rt-${randomUUID()}`;
        commands.reset();
        const c = await store.claim(key, 5_000);
        expect(commands.sent()).toBe(1);
        if (c.status !== 'claimed') throw new Error('expected a claim');
        commands.reset();
        expect(await store.complete(key, c.token)).toBe(true);
        expect(commands.sent()).toBe(1);
        // Completing again with the same token says yes (a retried call), and still one round trip.
        commands.reset();
        expect(await store.complete(key, c.token)).toBe(true);
        expect(commands.sent()).toBe(1);
      } finally {
        commands.restore();
      }
    });

    it('fails fast with a clear error when Redis cannot be reached', async () => {
      const down = redisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 500 });
      const started = Date.now();
      await expect(down.claim('k', 5_000)).rejects.toThrow(/^\[@payhook\/store-redis\] could not claim "k" .*REDIS_URL/);
      expect(Date.now() - started).toBeLessThan(1_500);
      await down.close();
    });

    it('rejects options it cannot honour', () => {
      expect(() => redisStore({})).toThrow(/^\[@payhook\/store-redis\] pass `url`/);
      expect(() => redisStore({ client: redis, prefix: 'a{b}:' })).toThrow(/prefix must not contain/);
      expect(() => redisStore({ client: redis, retentionMs: 0 })).toThrow(/retentionMs must be a positive/);
    });
  });
});

describe.skipIf(!url || !hasRedisServer())('the redis store on a server that keeps nothing', () => {
  it('warns once when the server has no append-only file, and not when it has one, refuses CONFIG, or is told not to', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const servers = await Promise.all([startRedis('none'), startRedis('everysec'), startRedis('none', ['--rename-command', 'CONFIG', ''])]);
    const [bare, durable, locked] = servers;
    const stores = [
      redisStore({ url: bare!.url }),
      redisStore({ url: bare!.url, checkDurability: false }),
      redisStore({ url: durable!.url }),
      redisStore({ url: locked!.url }),
    ];
    // The check is a CONFIG GET of its own, sent beside a store's first claim and not awaited by it.
    const checks = stores.map((store) => vi.spyOn(store.client, 'config'));
    try {
      for (const [n, store] of stores.entries())
        for (let i = 0; i < 3; i++) expect((await store.claim(`durability_${n}_${i}`, 5_000)).status).toBe('claimed');
      // Every store but the silenced one checked, once; a second warning could only come from one of these checks.
      expect(checks.map((c) => c.mock.calls.length)).toEqual([1, 0, 1, 1]);
      // Wait for each check's answer: the warning, if any, is printed before anything awaiting the same answer goes on.
      await Promise.allSettled(checks.flatMap((c) => c.mock.results.map((r) => r.value as unknown)));
      const said = warn.mock.calls.map((c) => String(c[0]));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/^\[@payhook\/store-redis\] Redis runs without its append-only file \(appendonly no\)/);
    } finally {
      warn.mockRestore();
      await Promise.all(stores.map((s) => s.close()));
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
});

describe.skipIf(!url || !hasRedisServer())("the redis store's own lines", () => {
  it("go to the logger of the receiver built on the store, not the console, and the connection's loss too", async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const server = await startRedis('none');
    const store = redisStore({ url: server.url, commandTimeoutMs: 500 });
    const lines: { level: string; message: string }[] = [];
    const receiver = createReceiver({
      secret: 'whsec_store_log',
      store,
      logger: (level, _fields, message) => void lines.push({ level, message }),
    });
    receiver.on('payment.success', () => {});
    try {
      expect((await receiver.handle(signedRequest(createEvent('payment.success'), { secret: 'whsec_store_log' }))).status).toBe(200);
      // Real waits, through the support module: the durability check is a CONFIG GET the first claim does not await, and the loss is a real socket's.
      await until(() => lines.some((l) => /append-only file/.test(l.message)), {
        what: "the store's durability warning in the receiver's logger",
      });
      await server.stop();
      await until(() => lines.some((l) => /lost Redis/.test(l.message)), {
        what: "the store's lost-connection line in the receiver's logger",
      });
      const own = lines.filter((l) => l.message.startsWith('[@payhook/store-redis] '));
      expect(own.map((l) => `${l.level}: ${/append-only file|lost Redis/.exec(l.message)?.[0]}`)).toEqual([
        'warn: append-only file',
        'error: lost Redis',
      ]);
      expect([...warn.mock.calls, ...error.mock.calls].filter((c) => String(c[0]).startsWith('[@payhook/store-redis]'))).toEqual([]);
    } finally {
      warn.mockRestore();
      error.mockRestore();
      await store.close();
      await server.stop();
    }
  });
});
