import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Log } from '@payhook/core/store';
import { redisStore, type RedisStoreOptions } from '@payhook/store-redis';
import { hasRedisServer, startRedis, type PrivateRedis } from '@payhook/test-support/servers/redis-server';
import { tcpProxy, type TcpProxy } from '@payhook/test-support/servers/tcp-proxy';
import { until } from '@payhook/test-support/wait';

/**
 * The store beside a real replica whose stream runs 200 ms behind (a proxy holds its bytes): the
 * wait for replicas, the start-up check of replication, and a switch of primary noticed. The
 * failover under load, counting effects, is test/faults/redis-failover.test.ts.
 */
const LAG_MS = 200;
const installed = hasRedisServer();

interface Logged {
  level: string;
  message: string;
  fields: object;
}
function capture() {
  const lines: Logged[] = [];
  const log: Log = { enabled: () => true, write: (level, fields, message) => void lines.push({ level, message, fields }) };
  return { lines, log };
}

describe.skipIf(!installed)('redis store beside a replica 200 ms behind', () => {
  let primary: PrivateRedis;
  let replica: PrivateRedis;
  let link: TcpProxy;
  let replicaClient: Redis;
  const stores: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    primary = await startRedis('everysec');
    link = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(primary.url).port) });
    link.delay(LAG_MS);
    replica = await startRedis('everysec', ['--replicaof', '127.0.0.1', String(link.port)]);
    replicaClient = new Redis(replica.url);
    await until(async () => (await replicaClient.info('replication')).includes('master_link_status:up'), {
      timeoutMs: 10_000,
      what: 'the replica in sync',
    });
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    replicaClient?.disconnect();
    await link?.close();
    await replica?.stop();
    await primary?.stop();
  });

  const make = (options: Partial<RedisStoreOptions> = {}) => {
    const { lines, log } = capture();
    const store = redisStore({ url: primary.url, prefix: `replicas-${stores.length}:`, ...options });
    store.useLogger?.(log);
    stores.push(store);
    return { store, lines };
  };
  const onReplica = (prefix: string, key: string) => replicaClient.exists(`${prefix}{${key}}:rec`);

  it('with waitForReplicas, a claim and a done record are on the replica when the call returns; without, they are not yet', async () => {
    const waiting = make({ waitForReplicas: { count: 1, timeoutMs: 1_500 } });
    const claim = await waiting.store.claim('k1', 10_000);
    expect(claim.status).toBe('claimed');
    expect(await onReplica('replicas-0:', 'k1')).toBe(1);
    if (claim.status !== 'claimed') return;
    expect(await waiting.store.complete('k1', claim.token)).toBe(true);
    expect(await replicaClient.hget('replicas-0:{k1}:rec', 'state')).toBe('done');

    const plain = make();
    expect((await plain.store.claim('k2', 10_000)).status).toBe('claimed');
    // The stream runs 200 ms behind: what a failover now would forget.
    expect(await onReplica('replicas-1:', 'k2')).toBe(0);
    await until(async () => (await onReplica('replicas-1:', 'k2')) === 1, { what: 'the claim reaching the replica' });
  });

  it('deliveries in flight share the waits: 20 claims at once send 2 WAITs, and each is on the replica when it returns', async () => {
    const waiting = make({ waitForReplicas: { count: 1, timeoutMs: 1_500 } });
    await waiting.store.claim('warm', 10_000);
    const waits = async () => Number(/cmdstat_wait:calls=(\d+)/.exec(await waiting.store.client.info('commandstats'))?.[1] ?? 0);
    const before = await waits();
    const keys = Array.from({ length: 20 }, (_, i) => `many-${i}`);
    // A WAIT blocks its connection for the replica's round trip (400 ms here): one per claim would take 8 s.
    const claims = await Promise.all(keys.map((k) => waiting.store.claim(k, 10_000)));
    expect(claims.map((c) => c.status)).toEqual(keys.map(() => 'claimed'));
    expect(await waits()).toBe(before + 2);
    const prefix = `replicas-${stores.length - 1}:`;
    expect(await Promise.all(keys.map((k) => onReplica(prefix, k)))).toEqual(keys.map(() => 1));
  });

  it('a WAIT whose connection was replaced confirms nothing: a client that resends it on the new connection gets the claim refused', async () => {
    const front = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(primary.url).port) });
    // ioredis's defaults: unanswered commands are sent again after a reconnect, the WAIT among them.
    const client = new Redis(front.url(primary.url)).on('error', () => {});
    const store = redisStore({ client, prefix: 'resent:', waitForReplicas: { count: 1, timeoutMs: 1_500 }, checkDurability: false });
    try {
      await store.claim('warm', 10_000);
      const claim = store.claim('cut', 10_000);
      // The WAIT is out for the replica's round trip (400 ms): the connection dies under it.
      await until(async () => (await replicaClient.exists('resent:{cut}:rec')) === 0 && front.open() > 0, { what: 'the claim sent' });
      front.cut();
      front.restore();
      await expect(claim).rejects.toThrow(/the connection to Redis was replaced before the replicas confirmed the write/);
    } finally {
      await store.close();
      client.disconnect();
      await front.close();
    }
  });

  it('warns once about asynchronous replicas the store does not wait for, naming the option; silent when it waits', async () => {
    const plain = make();
    await plain.store.claim('w1', 1_000);
    await until(() => plain.lines.length > 0, { what: 'the start-up check' });
    expect(plain.lines).toHaveLength(1);
    expect(plain.lines[0]!.level).toBe('warn');
    expect(plain.lines[0]!.message).toMatch(/^\[@payhook\/store-redis\] Redis has 1 asynchronous replica\(s\)/);
    expect(plain.lines[0]!.message).toContain('waitForReplicas: { count: 1 }');

    const waiting = make({ waitForReplicas: { count: 1 } });
    await waiting.store.claim('w2', 1_000);
    await waiting.store.get('w2');
    expect(waiting.lines).toEqual([]);
  });

  it('a wait for more replicas than there are: an error at start-up, and every claim fails at its timeout (the receiver answers 503)', async () => {
    const greedy = make({ waitForReplicas: { count: 2, timeoutMs: 100 } });
    const started = performance.now();
    await expect(greedy.store.claim('g1', 1_000)).rejects.toThrow(
      /[01] of the 2 replica\(s\) waitForReplicas asks for confirmed the write within 100 ms\)\. .*check the replicas/,
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
    await until(() => greedy.lines.length > 0, { what: 'the start-up check' });
    expect(greedy.lines[0]!.level).toBe('error');
    expect(greedy.lines[0]!.message).toContain('waitForReplicas asks for 2 replica(s), and Redis has 1 connected');
  });

  it('refuses a wait as long as the command timeout (its WAIT would end the connection), before connecting', () => {
    expect(() => redisStore({ url: primary.url, commandTimeoutMs: 2_000, waitForReplicas: { count: 1, timeoutMs: 2_000 } })).toThrow(
      /^\[@payhook\/store-redis\] waitForReplicas.timeoutMs \(2000\) must be shorter than commandTimeoutMs \(2000\)/,
    );
  });

  it('refuses a count that is not a whole number of replicas, before connecting', () => {
    for (const count of [0, 1.5, -1, Number.NaN]) {
      expect(() => redisStore({ url: primary.url, waitForReplicas: { count } })).toThrow(
        /^\[@payhook\/store-redis\] waitForReplicas.count must be a whole number/,
      );
    }
  });

  it('says nothing about replication where there are no replicas', async () => {
    const alone = await startRedis('everysec');
    const { lines, log } = capture();
    const store = redisStore({ url: alone.url, prefix: 'alone:' });
    store.useLogger?.(log);
    try {
      await store.claim('a1', 1_000);
      await store.get('a1');
      // The check's INFO goes out behind the claim on the same connection: once get answers, it has too.
      await store.client.ping();
      expect(lines).toEqual([]);
    } finally {
      await store.close();
      await alone.stop();
    }
  });

  it('notices a promoted replica behind the same address, and logs at error the window to reconcile', async () => {
    const front = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(primary.url).port) });
    const { lines, log } = capture();
    // No wait: the promoted replica has no replica of its own.
    const store = redisStore({ url: front.url(primary.url), prefix: 'switch:', checkDurability: false });
    store.useLogger?.(log);
    try {
      await store.claim('s1', 10_000);
      expect(lines).toEqual([]);
      // The replica is promoted and the address moves to it, as a managed service's failover does.
      await replicaClient.replicaof('NO', 'ONE');
      front.retarget(Number(new URL(replica.url).port));
      front.cut();
      front.restore();
      // The first calls fail on the connection the cut reset; the client reconnects to the promoted replica.
      await until(
        () =>
          store.claim('s2', 10_000).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 10_000, what: 'a claim on the promoted replica' },
      );
      await until(() => lines.some((l) => /different primary/.test(l.message)), { what: 'the switch logged' });
      const logged = lines.find((l) => /different primary/.test(l.message))!;
      expect(logged.level).toBe('error');
      expect(logged.message).toContain('a replica promoted in place of the one before');
      expect(logged.message).toMatch(/payhook reconcile --since \d{4}-\d\d-\d\dT\S+Z --until \d{4}-\d\d-\d\dT\S+Z/);
      expect(
        Date.parse(String((logged.fields as { until?: string }).until)) - Date.parse(String((logged.fields as { since?: string }).since)),
      ).toBeGreaterThanOrEqual(5 * 60_000);
    } finally {
      await store.close();
      await front.close();
    }
  });
});
