/**
 * `@payhook/testing/store`: the store contract as a vitest suite, to run against a store of your own.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '@payhook/core';
import { DEFAULT_RETENTION_MS } from '@payhook/core/store';
import { storeRaces } from './conformance/store-races.js';
import type { StoreUnderTest } from './conformance/store-subject.js';

export type { StoreUnderTest } from './conformance/store-subject.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** How long past its end a real server's lease may take to be seen as over. */
const LAPSE_TIMEOUT_MS = 5_000;

/**
 * The store contract, written once and run unchanged against every store: claims, completion,
 * release, fencing by token, lease expiry and extension, retention, concurrency, and (for a
 * shared backend) one claim across several clients. Run it against your own `Store` (DynamoDB,
 * Cloudflare KV…) from a vitest test file. Keys are unique per run, so a durable backend needs
 * no clean-up between runs; every store `make()` returned is closed after the suite.
 *
 * @example
 * // dynamo-store.test.ts: a backend that several clients (processes) share
 * import { storeConformance } from '@payhook/testing/store';
 * import { dynamoStore } from '../src/dynamo-store.js';
 *
 * storeConformance('dynamodb', { make: () => dynamoStore({ table: 'payhook-test' }), shared: true });
 *
 * @example
 * // A store that reads an injectable clock: lease and retention tests move it instead of sleeping.
 * import { memoryStore } from '@payhook/core';
 * import { storeConformance } from '@payhook/testing/store';
 *
 * let now = Date.now();
 * storeConformance('memory', {
 *   make: () => memoryStore({ now: () => now }),
 *   shared: false,
 *   advance: (ms) => {
 *     now += ms;
 *   },
 * });
 */
export function storeConformance(name: string, subject: StoreUnderTest): void {
  const elapse = async (ms: number) => {
    if (subject.advance) return subject.advance(ms);
    // No clock to move: a real server's lease timeout is the thing under test, so wait for real.
    await sleep(ms);
  };

  describe(`store conformance: ${name}`, () => {
    let store: Store;
    const opened: Store[] = [];
    const open = async () => {
      const s = await subject.make();
      opened.push(s);
      return s;
    };
    const run = randomUUID().slice(0, 8);
    let n = 0;
    const key = () => `conf-${run}:ref_${++n}:payment.success`;

    /**
     * Returns once `witness`, claimed with a lease of `leaseMs`, can be claimed again: its lease has
     * ended on the store's own clock. A virtual clock is moved past it; a real server is asked until
     * it says so, since a fixed sleep only guesses at when the server's lease ends.
     */
    const lapse = async (witness: string, leaseMs: number) => {
      if (subject.advance) await subject.advance(leaseMs);
      const end = Date.now() + leaseMs + LAPSE_TIMEOUT_MS;
      for (;;) {
        const r = await store.claim(witness, 5_000);
        if (r.status === 'claimed') return;
        if (subject.advance || Date.now() > end) {
          throw new Error(
            `a claim with a lease of ${leaseMs} ms could still not be taken over ${subject.advance ? `after the clock moved ${leaseMs} ms` : `${LAPSE_TIMEOUT_MS} ms after it ended`} (claim says ${r.status}); a lease must end when its time is up.`,
          );
        }
        await sleep(20);
      }
    };

    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      for (const s of opened) await s.close?.();
    });

    it('claims a new key, then reports it in progress', async () => {
      const k = key();
      const first = await store.claim(k, 5_000);
      expect(first).toMatchObject({ status: 'claimed', attempt: 1 });
      const second = await store.claim(k, 5_000);
      expect(second.status).toBe('in-progress');
      expect(await store.get(k)).toMatchObject({ state: 'claimed', attempt: 1 });
    });

    it('reports done after complete, with the outcome', async () => {
      const ok = key();
      const c = await store.claim(ok, 5_000);
      if (c.status !== 'claimed') throw new Error('expected a claim');
      // No outcome given is 'ok'.
      expect(await store.complete(ok, c.token)).toBe(true);
      expect(await store.claim(ok, 5_000)).toMatchObject({ status: 'done', outcome: 'ok' });
      expect(await store.get(ok)).toMatchObject({ state: 'done', outcome: 'ok', attempt: 1 });

      // 'rejected': a handler threw NonRetriableError, the receiver's outcome of the same name.
      const rejected = key();
      const f = await store.claim(rejected, 5_000);
      if (f.status !== 'claimed') throw new Error('expected a claim');
      expect(await store.complete(rejected, f.token, { outcome: 'rejected' })).toBe(true);
      expect(await store.claim(rejected, 5_000)).toMatchObject({ status: 'done', outcome: 'rejected' });
      expect(await store.get(rejected)).toMatchObject({ state: 'done', outcome: 'rejected', attempt: 1 });
    });

    it('lets the next claim run again after a release, counting the attempt', async () => {
      const k = key();
      const c = await store.claim(k, 5_000);
      if (c.status !== 'claimed') throw new Error('expected a claim');
      expect(await store.release(k, c.token)).toBe(true);
      expect(await store.get(k)).toMatchObject({ state: 'released', attempt: 1 });
      expect(await store.claim(k, 5_000)).toMatchObject({ status: 'claimed', attempt: 2 });
    });

    it('acts only for the token that holds the claim', async () => {
      const k = key();
      const c = await store.claim(k, 5_000);
      if (c.status !== 'claimed') throw new Error('expected a claim');
      const wrong = randomUUID();
      expect(await store.complete(k, wrong)).toBe(false);
      expect(await store.release(k, wrong)).toBe(false);
      expect(await store.extend(k, wrong, 5_000)).toBe(false);
      expect((await store.claim(k, 5_000)).status).toBe('in-progress');
      expect(await store.complete(k, c.token)).toBe(true);
      // Completing again with the same token is idempotent; another token never completes it.
      expect(await store.complete(k, c.token)).toBe(true);
      expect(await store.complete(k, wrong)).toBe(false);
      // A done record cannot be released or extended, not even by its own token.
      expect(await store.release(k, c.token)).toBe(false);
      expect(await store.extend(k, c.token, 5_000)).toBe(false);
      expect((await store.claim(k, 5_000)).status).toBe('done');
      expect(await store.complete('never-claimed-' + k, c.token)).toBe(false);
    });

    it('lets a claim be taken over once its lease expires, and fences the old token before and after', async () => {
      const k = key();
      const old = await store.claim(k, 150);
      if (old.status !== 'claimed') throw new Error('expected a claim');
      await elapse(300);
      // A lapsed token acts on nothing, even before anyone takes the key over: its process may be
      // alive but stalled past its lease, and another may be about to run the event.
      expect(await store.extend(k, old.token, 5_000)).toBe(false);
      expect(await store.release(k, old.token)).toBe(false);
      expect(await store.complete(k, old.token)).toBe(false);
      // A lapsed claim reads as given up, so that no one waits for a process that is gone.
      expect(await store.get(k)).toEqual({ state: 'released', attempt: 1 });
      const next = await store.claim(k, 5_000);
      expect(next).toMatchObject({ status: 'claimed', attempt: 2 });
      if (next.status !== 'claimed') throw new Error('expected a claim');
      expect(await store.complete(k, old.token)).toBe(false);
      expect(await store.extend(k, old.token, 5_000)).toBe(false);
      expect(await store.release(k, old.token)).toBe(false);
      expect(await store.get(k)).toMatchObject({ state: 'claimed', attempt: 2 });
      expect(await store.complete(k, next.token)).toBe(true);
      expect((await store.claim(k, 5_000)).status).toBe('done');
    });

    it('keeps a claim alive while it is extended', async () => {
      const k = key();
      const c = await store.claim(k, 300);
      if (c.status !== 'claimed') throw new Error('expected a claim');
      const first = await store.get(k);
      expect(await store.extend(k, c.token, 60_000)).toBe(true);
      const extended = await store.get(k);
      if (first?.state !== 'claimed' || extended?.state !== 'claimed')
        throw new Error(`expected a claimed record; got ${JSON.stringify([first, extended])}`);
      // Extended by a minute at a moment no earlier than the claim: the lease now ends about a minute
      // after the first one did (less the 300 ms of the first, and some slack for a store that rounds its clock).
      expect(extended.leaseExpiresAt - first.leaseExpiresAt).toBeGreaterThanOrEqual(59_000);
      // A witness claimed after k with the same lease: once it can be taken over, k's first lease
      // has ended too, on the store's own clock, however slowly this process ran.
      const witness = key();
      expect((await store.claim(witness, 300)).status).toBe('claimed');
      await lapse(witness, 300);
      expect((await store.claim(k, 5_000)).status).toBe('in-progress');
      expect(await store.get(k)).toMatchObject({ state: 'claimed', attempt: 1 });
      expect(await store.complete(k, c.token)).toBe(true);
    });

    it('forgets a done record after its retention', async () => {
      const k = key();
      const c = await store.claim(k, 5_000);
      if (c.status !== 'claimed') throw new Error('expected a claim');
      expect(await store.complete(k, c.token, { ttlMs: 200 })).toBe(true);
      expect((await store.claim(k, 5_000)).status).toBe('done');
      await elapse(400);
      expect(await store.get(k)).toBeUndefined();
      expect(await store.claim(k, 5_000)).toMatchObject({ status: 'claimed', attempt: 1 });
    });

    // A store's retention is hours or days: only a clock the suite moves can get past it.
    if (subject.advance)
      it('holds a claim for its whole lease when the lease outlasts the retention', async () => {
        // A store that names no retention keeps records for the default one.
        const retention = store.retentionMs ?? DEFAULT_RETENTION_MS;
        const [k, extended] = [key(), key()];
        const c = await store.claim(k, retention + 60_000);
        const e = await store.claim(extended, 5_000);
        if (c.status !== 'claimed' || e.status !== 'claimed') throw new Error('expected two claims');
        expect(await store.extend(extended, e.token, retention + 60_000)).toBe(true);
        await elapse(retention + 30_000);
        // Past the retention, within the lease (claimed so, or extended to it): the claim still holds, its record kept.
        expect(await store.claim(k, 5_000)).toMatchObject({ status: 'in-progress' });
        expect(await store.claim(extended, 5_000)).toMatchObject({ status: 'in-progress' });
        expect(await store.get(k)).toMatchObject({ state: 'claimed', attempt: 1 });
        expect(await store.complete(k, c.token)).toBe(true);
        expect((await store.claim(k, 5_000)).status).toBe('done');
        await elapse(30_000);
        expect((await store.claim(extended, 5_000)).status).toBe('claimed');
        // The done record is kept for the retention from its completion.
        expect((await store.claim(k, 5_000)).status).toBe('done');
        await elapse(retention);
        expect(await store.get(k)).toBeUndefined();
      });

    it('keeps keys apart, whatever characters they hold', async () => {
      const keys = [key() + ':ü€', key() + ' {tag}', key() + '%_*'];
      for (const k of keys) expect((await store.claim(k, 5_000)).status).toBe('claimed');
      for (const k of keys) expect((await store.claim(k, 5_000)).status).toBe('in-progress');
    });

    it("keeps two merchant accounts' keys of one event apart: one account's done record is not the other's", async () => {
      // A receiver with `accounts` starts each key with the account (`@acct_A:`): the same event of two accounts is two keys.
      const event = key();
      const [a, b] = [`@acct_A:${event}`, `@acct_B:${event}`];
      const claimed = await store.claim(a, 5_000);
      if (claimed.status !== 'claimed') throw new Error('expected a claim');
      expect(await store.complete(a, claimed.token, { outcome: 'ok' })).toBe(true);
      expect((await store.claim(a, 5_000)).status).toBe('done');
      expect((await store.claim(b, 5_000)).status).toBe('claimed');
    });

    storeRaces({ subject, store: () => store, open, key, lapse });
  });
}
