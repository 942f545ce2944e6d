import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import type { LedgerEntry } from '@payhook/core';
import { redisStore } from '@payhook/store-redis';
import { ledgerConformance } from '@payhook/testing/ledger';
import { requireRedis } from '@payhook/test-support/services';
import { countCommands, keySlot } from './redis-helpers.js';
import { until } from '@payhook/test-support/wait';

const url = await requireRedis();

const fresh = () => `payhook-ledger-test-${randomUUID().slice(0, 8)}:`;
let n = 0;
const idAt = (t: number) => `${t.toString(36).padStart(11, '0')}-${(n++ % 1_679_616).toString(36).padStart(4, '0')}-redis`;
const body = JSON.stringify({
  event: 'payment.success',
  data: {
    reference: 'ref_000000',
    amount: 250_000,
    currency: 'NGN',
    customer: { email: 'ada@example.com' },
    metadata: { order: 'ord_0000000000' },
  },
});
const entry = (t: number, fields: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id: idAt(t),
  receivedAt: t,
  source: 'webhook',
  reference: `ref_${n}`,
  event: 'payment.success',
  dedupeKey: `live:ref_${n}:payment.success`,
  outcome: 'processed',
  status: 200,
  durationMs: 4.25,
  attempt: 1,
  signature: 'valid',
  secretIndex: 0,
  signatureHeader: 'a'.repeat(128),
  body,
  bodyEncoding: 'utf8',
  ...fields,
});

describe.skipIf(!url)('redis ledger', () => {
  ledgerConformance('redis', {
    make: async (bounds) => {
      const store = redisStore({ url: url!, prefix: fresh(), ledger: bounds, checkDurability: false });
      return { ledger: store.ledger!, close: () => store.close() };
    },
  });

  describe('redis ledger specifics', () => {
    const redis = new Redis(url!);
    const stores: { close(): Promise<void> }[] = [];
    const open = (ledger: Parameters<typeof redisStore>[0]['ledger'] = true) => {
      const prefix = fresh();
      const store = redisStore({ client: redis, prefix, ledger, checkDurability: false });
      stores.push(store);
      return { prefix, ledger: store.ledger! };
    };
    afterAll(async () => {
      for (const s of stores) await s.close();
      // Leave nothing behind on the shared Redis.
      const keys = await redis.keys('payhook-ledger-test-*');
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      redis.disconnect();
    });

    it('has no ledger unless asked, and refuses bad ledger options with the fix in the message', () => {
      const plain = redisStore({ client: redis, prefix: fresh() });
      expect(plain.ledger).toBeUndefined();
      expect('ledger' in plain).toBe(false);
      expect(() => redisStore({ client: redis, ledger: { maxEntries: 0 } })).toThrow(
        /\[@payhook\/store-redis\] ledger\.maxEntries must be a positive whole number.*Leave it unset for 100000/,
      );
      expect(() => redisStore({ client: redis, ledger: { retentionMs: -1 } })).toThrow(/\[@payhook\/store-redis\] ledger\.retentionMs/);
      expect(() => redisStore({ client: redis, ledger: { body: 'zip' as 'keep' } })).toThrow(
        /\[@payhook\/store-redis\] ledger\.body must be 'keep' or 'hash'/,
      );
      expect(redisStore({ client: redis, ledger: { body: 'hash' } }).ledger!.body).toBe('hash');
      expect(redisStore({ client: redis, ledger: true }).ledger!.body).toBe('keep');
    });

    it('rejects with the package, the operation and what to check when Redis cannot be reached', async () => {
      const quiet = vi.spyOn(console, 'error').mockImplementation(() => {}); // the store's "lost Redis" line
      const down = redisStore({ url: 'redis://127.0.0.1:1', ledger: true, commandTimeoutMs: 200, checkDurability: false });
      const hint = /\[@payhook\/store-redis\] could not .*Check that Redis is running and reachable at the configured URL \(REDIS_URL\)/;
      await expect(down.ledger!.append([entry(Date.now())])).rejects.toThrow(hint);
      await expect(down.ledger!.list()).rejects.toThrow(hint);
      await expect(down.ledger!.get('x')).rejects.toThrow(hint);
      // A bad page size is the caller's mistake, said as such before Redis is asked.
      await expect(down.ledger!.list({ limit: 5000 })).rejects.toThrow(/limit must be a whole number from 1 to 1000/);
      await down.close();
      quiet.mockRestore();
    });

    it('keeps every ledger key in one Cluster slot, whatever the reference holds', async () => {
      const { prefix, ledger } = open();
      const t = Date.now();
      const dead = entry(t, { reference: 'a}b{c', outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
      await ledger.append([entry(t, { reference: '{x}' }), entry(t, { reference: 'ü€ \n"' }), dead]);
      await ledger.update(dead.id, { late: { outcome: 'failed', durationMs: 1 } });
      const keys = await redis.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThanOrEqual(10);
      expect(keys.every((k) => k.startsWith(`${prefix}{ledger}:`))).toBe(true);
      expect(new Set(keys.map(keySlot)).size).toBe(1);
      expect((await ledger.list({ reference: 'ü€ \n"' })).map((e) => e.reference)).toEqual(['ü€ \n"']);
    });

    it('appends a batch in one round trip', async () => {
      const { ledger } = open();
      await ledger.append([entry(Date.now())]); // loads the script if Redis had not seen it
      const commands = countCommands(redis);
      try {
        await ledger.append(Array.from({ length: 100 }, () => entry(Date.now())));
        expect(commands.sent()).toBe(1);
      } finally {
        commands.restore();
      }
    });

    it('expires each record key when its retention ends, counted from its receipt; an open dead letter when its own ends', async () => {
      const { prefix, ledger } = open({ retentionMs: 60_000, deadLetterRetentionMs: 600_000 });
      const t = Date.now();
      const plain = entry(t - 50_000);
      const dead = entry(t - 50_000, { outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
      await ledger.append([plain, dead]);
      const key = (id: string) => `${prefix}{ledger}:e:${id}`;
      const within = async (k: string, low: number, high: number) => {
        const ms = await redis.pttl(k);
        expect(ms, k).toBeGreaterThan(low);
        expect(ms, k).toBeLessThanOrEqual(high);
      };
      // 60 s from receivedAt, not from the write: about 10 s left; the open dead letter, 550 s.
      await within(key(plain.id), 9_000, 10_000);
      await within(key(dead.id), 549_000, 550_000);
      await within(`${prefix}{ledger}:ref:${plain.reference}`, 9_000, 10_000);
      // A set lives as long as the longest-lived record it holds.
      for (const set of ['dead', 'dead-all', 'all', `ref:${dead.reference}`]) await within(`${prefix}{ledger}:${set}`, 549_000, 550_000);

      await ledger.update(dead.id, { late: { outcome: 'failed', durationMs: 2.5 } });
      await within(key(dead.id), 549_000, 550_000);
      // Retried: back to the retention, from its receipt.
      await ledger.update(dead.id, { deadLetter: { reason: 'rejected', at: t, retriedBy: plain.id } });
      await within(key(dead.id), 9_000, 10_000);
      expect(await redis.exists(`${prefix}{ledger}:dead`)).toBe(0);
      expect(await ledger.get(dead.id)).toEqual({
        ...dead,
        late: { outcome: 'failed', durationMs: 2.5 },
        deadLetter: { reason: 'rejected', at: t, retriedBy: plain.id },
      });

      // Past its retention already: not written at all; a dead letter retried past it goes at once.
      const old = entry(t - 61_000);
      const oldDead = entry(t - 61_000, { outcome: 'rejected', deadLetter: { reason: 'rejected', at: t } });
      await ledger.append([old, oldDead]);
      expect(await redis.exists(key(old.id))).toBe(0);
      await within(key(oldDead.id), 538_000, 539_000);
      await ledger.update(oldDead.id, { deadLetter: { reason: 'rejected', at: t, retriedBy: plain.id } });
      expect(await redis.exists(key(oldDead.id))).toBe(0);
      expect(await redis.zscore(`${prefix}{ledger}:all`, oldDead.id)).toBeNull();
      expect(await redis.zscore(`${prefix}{ledger}:ref:${oldDead.reference}`, oldDead.id)).toBeNull();
    });

    it('lets a record go when its retention ends, with nobody writing (Redis expiry: a short real wait)', async () => {
      const { prefix, ledger } = open({ retentionMs: 60_000 });
      const e = entry(Date.now() - 59_700);
      await ledger.append([e]);
      expect(await redis.exists(`${prefix}{ledger}:e:${e.id}`)).toBe(1);
      // Real wait: Redis expires the key on its own clock, about 300 ms from now.
      await until(async () => (await redis.exists(`${prefix}{ledger}:e:${e.id}`)) === 0, {
        timeoutMs: 1_000,
        what: 'Redis to expire the record',
      });
      expect(await ledger.list({ reference: e.reference })).toEqual([]);
    });

    it('skips records whose key expired before a trim reached them, and drops their ids', async () => {
      const { prefix, ledger } = open();
      const t = Date.now();
      const [a, b, c] = [entry(t, { reference: 'gone' }), entry(t + 1, { reference: 'gone' }), entry(t + 2, { reference: 'gone' })];
      await ledger.append([a, b, c]);
      await redis.del(`${prefix}{ledger}:e:${b.id}`);
      expect((await ledger.list({ reference: 'gone', limit: 1 })).map((e) => e.id)).toEqual([c.id]);
      expect((await ledger.list({ reference: 'gone', limit: 1, before: c.id })).map((e) => e.id)).toEqual([a.id]);
      expect(await redis.zscore(`${prefix}{ledger}:ref:gone`, b.id)).toBeNull();
      expect(await redis.zscore(`${prefix}{ledger}:all`, b.id)).toBeNull();
    });

    it('pages through records received in the same millisecond without gaps or repeats', async () => {
      const { ledger } = open();
      const t = Date.now();
      const same = Array.from({ length: 25 }, () => entry(t, { reference: 'same-ms' }));
      await ledger.append(same);
      const seen: string[] = [];
      let before: string | undefined;
      for (;;) {
        const page = await ledger.list({ event: 'payment.success', limit: 7, before, since: t, until: t + 1 });
        seen.push(...page.map((e) => e.id));
        if (page.length < 7) break;
        before = page.at(-1)!.id;
      }
      expect(seen).toEqual(same.map((e) => e.id).reverse());
    });

    it('holds 10,000 records appended in batches of 100, every one listable, and reports the memory each takes', async () => {
      const { prefix, ledger } = open({ maxEntries: 20_000 });
      const used = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
      const start = await used();
      const t = Date.now() - 10_000;
      const written: string[] = [];
      for (let b = 0; b < 100; b++) {
        const batch = Array.from({ length: 100 }, (_, i) =>
          entry(t + b * 100 + i, { reference: `ref_${b}_${i}`, outcome: i % 10 ? 'processed' : 'accepted' }),
        );
        written.push(...batch.map((e) => e.id));
        await ledger.append(batch);
      }
      const perEntry = ((await used()) - start) / 10_000;
      const seen: string[] = [];
      let before: string | undefined;
      for (;;) {
        const page = await ledger.list({ limit: 1000, before });
        seen.push(...page.map((e) => e.id));
        if (page.length < 1000) break;
        before = page.at(-1)!.id;
      }
      expect(seen.length).toBe(10_000);
      expect(seen).toEqual(written.reverse());
      const sample = `${prefix}{ledger}:e:${seen[5000]}`;
      const record = (await redis.memory('USAGE', sample)) as number;
      const value = (await redis.strlen(sample)) as number;
      const sets = ['all', 'live', 'event:payment.success', 'outcome:processed'];
      const setBytes = await Promise.all(
        sets.map(async (s) => (await redis.memory('USAGE', `${prefix}{ledger}:${s}`, 'SAMPLES', 0)) as number),
      );
      console.log(
        `[ledger-redis] ${perEntry.toFixed(0)} bytes of Redis memory per record (used_memory delta / 10,000); ` +
          `one record key ${record} B (value ${value} B, body ${body.length} B); ` +
          sets.map((s, i) => `${s} ${(setBytes[i]! / 10_000).toFixed(0)} B/record`).join(', '),
      );
      expect(perEntry).toBeLessThan(2_500);
    });
  });
});
