import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { LedgerEntry } from '@payhook/core';
import { redisStore } from '@payhook/store-redis';
import { requireRedis } from '@payhook/test-support/services';
import { countCommands } from './redis-helpers.js';

const url = await requireRedis();

let n = 0;
const entry = (t: number, fields: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id: `${t.toString(36).padStart(11, '0')}-${(n++ % 1_679_616).toString(36).padStart(4, '0')}-racct`,
  receivedAt: t,
  source: 'webhook',
  reference: `ref_${n}`,
  event: 'payment.success',
  outcome: 'processed',
  status: 200,
  durationMs: 2,
  signature: 'valid',
  body: '{"event":"payment.success"}',
  bodyEncoding: 'utf8',
  ...fields,
});

// The account index (issue 50): one sorted set per account, kept, trimmed and removed with its records.
describe.skipIf(!url)('redis ledger: the account index', () => {
  const redis = new Redis(url!);
  const stores: { close(): Promise<void> }[] = [];
  const open = (ledger: Parameters<typeof redisStore>[0]['ledger'] = true) => {
    const prefix = `payhook-ledger-test-${randomUUID().slice(0, 8)}:`;
    const store = redisStore({ client: redis, prefix, ledger, checkDurability: false });
    stores.push(store);
    return { ledger: store.ledger!, key: (account: string) => `${prefix}{ledger}:account:${account}` };
  };
  afterAll(async () => {
    for (const s of stores) await s.close();
    const keys = await redis.keys('payhook-ledger-test-*');
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
    redis.disconnect();
  });

  it('indexes each account apart, with an expiry, and drops an account’s set when its last record is removed', async () => {
    const { ledger, key } = open();
    const t = Date.now();
    const a = [entry(t, { account: 'A' }), entry(t + 1, { account: 'A' })];
    const b = entry(t + 2, { account: 'B' });
    await ledger.append([...a, b, entry(t + 3)]);
    expect(await redis.zrange(key('A'), '0', '-1')).toEqual(a.map((e) => e.id));
    expect(await redis.zrange(key('B'), '0', '-1')).toEqual([b.id]);
    expect(await redis.pttl(key('A'))).toBeGreaterThan(0);
    expect(await ledger.remove([a[0]!.id])).toBe(1);
    expect(await redis.zrange(key('A'), '0', '-1')).toEqual([a[1]!.id]);
    await ledger.remove([a[1]!.id]);
    expect(await redis.exists(key('A'))).toBe(0);
    expect(await redis.exists(key('B'))).toBe(1);
  });

  it('trims the account’s set with its records past maxEntries, keeping its open dead letter', async () => {
    const { ledger, key } = open({ maxEntries: 10 });
    const t = Date.now();
    const dead = entry(t, { account: 'A', outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
    await ledger.append([dead]);
    for (let b = 0; b < 5; b++) await ledger.append(Array.from({ length: 10 }, (_, i) => entry(t + 1 + b * 10 + i, { account: 'A' })));
    const indexed = await redis.zrange(key('A'), '0', '-1');
    // 50 written past the dead letter: the newest 10 kept (Redis trims in the append itself), and the dead letter.
    expect(indexed).toHaveLength(11);
    expect(indexed[0]).toBe(dead.id);
    expect((await ledger.list({ account: 'A', limit: 1000 })).map((e) => e.id)).toEqual([...indexed].reverse());
  });

  it('reads the account’s own set: one account’s page is one round trip among thousands of another’s', async () => {
    const { ledger } = open();
    const t = Date.now() - 10_000;
    const mine = entry(t, { account: 'small' });
    const failed = entry(t + 1, { account: 'big', outcome: 'failed', status: 500 });
    await ledger.append([mine, failed]);
    for (let b = 0; b < 20; b++) await ledger.append(Array.from({ length: 100 }, (_, i) => entry(t + 2 + b * 100 + i, { account: 'big' })));
    const commands = countCommands(redis);
    try {
      expect((await ledger.list({ account: 'small' })).map((e) => e.id)).toEqual([mine.id]);
      expect((await ledger.list({ account: 'small', outcome: 'processed' })).map((e) => e.id)).toEqual([mine.id]);
      // A rare outcome is read from its own set, which the big account's common answers are not in.
      expect((await ledger.list({ account: 'big', outcome: 'failed' })).map((e) => e.id)).toEqual([failed.id]);
      expect(commands.sent()).toBe(3);
    } finally {
      commands.restore();
    }
  });
});
