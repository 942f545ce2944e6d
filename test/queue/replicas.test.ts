import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createEvent } from '@payhook/testing';
import { bullmqQueue, jobIdOf } from '@payhook/queue-bullmq';
import type { QueuedEvent } from '@payhook/core/queue';
import { hasRedisServer, startRedis, type PrivateRedis } from '@payhook/test-support/servers/redis-server';
import { tcpProxy, type TcpProxy } from '@payhook/test-support/servers/tcp-proxy';
import { until } from '@payhook/test-support/wait';

/**
 * The BullMQ handoff beside a real replica whose stream runs 200 ms behind: with
 * `waitForReplicas`, an enqueue returns (and the receiver answers 202) only once the replica holds
 * the job, so a failover cannot lose an event already answered. Run on the lowest and newest BullMQ.
 */
const installed = hasRedisServer();

describe.skipIf(!installed)('the BullMQ handoff waits for replicas', () => {
  let primary: PrivateRedis;
  let replica: PrivateRedis;
  let link: TcpProxy;
  let onReplica: Redis;
  beforeAll(async () => {
    primary = await startRedis('everysec', ['--maxmemory-policy', 'noeviction']);
    link = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(primary.url).port) });
    link.delay(200);
    replica = await startRedis('everysec', ['--replicaof', '127.0.0.1', String(link.port)]);
    onReplica = new Redis(replica.url);
    await until(async () => (await onReplica.info('replication')).includes('master_link_status:up'), {
      timeoutMs: 10_000,
      what: 'the replica in sync',
    });
  });
  afterAll(async () => {
    onReplica?.disconnect();
    await link?.close();
    await replica?.stop();
    await primary?.stop();
  });

  const job = (): QueuedEvent => {
    const event = createEvent('payment.success', { reference: `rep_${randomUUID().slice(0, 8)}` });
    return {
      v: 1,
      event,
      dedupeKey: `sandbox:${event.reference}:payment.success`,
      source: 'webhook',
      secretIndex: 0,
      queuedAt: Date.now(),
    };
  };
  const connection = () => ({ host: '127.0.0.1', port: Number(new URL(primary.url).port), maxRetriesPerRequest: null });
  const jobOnReplica = (name: string, j: QueuedEvent) => onReplica.exists(`bull:${name}:${jobIdOf(j.dedupeKey)}`);

  it('returns once the replica holds the job; without the option the replica does not have it yet', async () => {
    const waiting = bullmqQueue({ connection: connection(), name: 'rep-wait', waitForReplicas: { count: 1, timeoutMs: 2_000 } });
    const plain = bullmqQueue({ connection: connection(), name: 'rep-plain' });
    try {
      const a = job();
      await waiting.enqueue(a, {} as never);
      expect(await jobOnReplica('rep-wait', a)).toBe(1);
      const b = job();
      await plain.enqueue(b, {} as never);
      expect(await jobOnReplica('rep-plain', b)).toBe(0);
      await until(async () => (await jobOnReplica('rep-plain', b)) === 1, { what: 'the job reaching the replica' });
    } finally {
      await Promise.all([waiting.close(), plain.close()]);
    }
  });

  it('enqueues in flight share the waits: 20 at once send at most 3 WAITs, and each job is on the replica when its enqueue returns', async () => {
    const queue = bullmqQueue({ connection: connection(), name: 'rep-many', waitForReplicas: { count: 1, timeoutMs: 2_000 } });
    const admin = new Redis(primary.url);
    try {
      await queue.enqueue(job(), {} as never);
      const waits = async () => Number(/cmdstat_wait:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
      const before = await waits();
      const jobs = Array.from({ length: 20 }, job);
      // A WAIT blocks its connection for the replica's round trip (400 ms here): one per job would take 8 s.
      await Promise.all(jobs.map((j) => queue.enqueue(j, {} as never)));
      expect(await waits()).toBeLessThanOrEqual(before + 3);
      expect(await Promise.all(jobs.map((j) => jobOnReplica('rep-many', j)))).toEqual(jobs.map(() => 1));
    } finally {
      admin.disconnect();
      await queue.close();
    }
  });

  it('fails the enqueue, naming the replicas, when fewer confirm it in time (the service then retries)', async () => {
    const greedy = bullmqQueue({ connection: connection(), name: 'rep-greedy', waitForReplicas: { count: 2, timeoutMs: 100 } });
    try {
      await expect(greedy.enqueue(job(), {} as never)).rejects.toThrow(
        /^\[@payhook\/queue-bullmq\] could not add .*: [01] of the 2 replica\(s\) waitForReplicas asks for confirmed the job within 100 ms\. Check that Redis and, with waitForReplicas, its replicas are reachable/,
      );
    } finally {
      await greedy.close();
    }
  });

  it('a WAIT whose connection was replaced confirms nothing: ioredis sends it again on the new connection, and the enqueue fails', async () => {
    const front = await tcpProxy({ host: '127.0.0.1', port: Number(new URL(primary.url).port) });
    const queue = bullmqQueue({
      connection: { host: '127.0.0.1', port: front.port, maxRetriesPerRequest: null },
      name: 'rep-cut',
      waitForReplicas: { count: 1, timeoutMs: 1_500 },
    });
    try {
      await queue.enqueue(job(), {} as never);
      const cut = job();
      const enqueued = queue.enqueue(cut, {} as never);
      // The job is on the primary and its WAIT is out for the replica's round trip (400 ms): the connection dies under it.
      const primaryClient = new Redis(primary.url);
      try {
        await until(async () => (await primaryClient.exists(`bull:rep-cut:${jobIdOf(cut.dedupeKey)}`)) === 1, { what: 'the job added' });
      } finally {
        primaryClient.disconnect();
      }
      front.cut();
      front.restore();
      await expect(enqueued).rejects.toThrow(/the connection to Redis was replaced before the replicas confirmed the job/);
    } finally {
      await queue.close();
      await front.close();
    }
  });

  it('refuses a count that is not a whole number of replicas', () => {
    for (const count of [0, 1.5]) {
      expect(() => bullmqQueue({ connection: connection(), waitForReplicas: { count } })).toThrow(
        /^\[@payhook\/queue-bullmq\] waitForReplicas needs a whole count/,
      );
    }
  });
});
