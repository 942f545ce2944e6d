import { expect, it } from 'vitest';
import type { Store } from '@payhook/core';
import type { ClaimResult } from '@payhook/core/store';
import type { StoreCases } from './store-subject.js';

/** Keys raced for per takeover case: a race lost once in a while still shows within a few. */
const ROUNDS = 5;
/** The lease a lapsing case claims with: short, since a real server's clock must run it out. */
const SHORT_LEASE_MS = 150;

/**
 * The store contract under concurrency: many claims of one key at once, whether the key is new, or
 * released, or its lease lapsed (a takeover: exactly one wins, as the key's second attempt), and for
 * a shared backend the claims spread across several clients. Run by `storeConformance` for every store.
 */
export function storeRaces({ subject, store, open, key, lapse }: StoreCases): void {
  // Several clients of a shared backend, as several processes are; opened once, for every case.
  let clients: Promise<Store[]> | undefined;
  const racers = () => {
    clients ??= subject.shared ? Promise.all([open(), open(), open(), open()]) : Promise.resolve([store()]);
    return clients;
  };
  /** `n` claims of `k` at once, taking turns between the racing clients. */
  const race = async (k: string, n: number): Promise<ClaimResult[]> => {
    const through = await racers();
    return Promise.all(Array.from({ length: n }, (_, i) => through[i % through.length]!.claim(k, 5_000)));
  };

  it('gives exactly one claim to 50 concurrent claims of one key', async () => {
    const k = key();
    const results = await Promise.all(Array.from({ length: 50 }, () => store().claim(k, 5_000)));
    expect(results.filter((r) => r.status === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'in-progress')).toHaveLength(49);
  });

  /** Claims ROUNDS keys, gives each up (`free`), then races 20 claims for each: one takes it over. */
  const takeover = async (leaseMs: number, free: (claimed: { k: string; token: string }[]) => Promise<void>) => {
    const claimed: { k: string; token: string }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const k = key();
      const c = await store().claim(k, leaseMs);
      if (c.status !== 'claimed') throw new Error(`expected a claim of a new key; got ${JSON.stringify(c)}`);
      claimed.push({ k, token: c.token });
    }
    await free(claimed);
    // The first key raced alone, the rest at once: a store that writes the claims arriving together
    // as one (Postgres) takes both paths.
    const [first, ...rest] = claimed.map(({ k }) => k);
    const raced = [await race(first!, 20), ...(await Promise.all(rest.map((k) => race(k, 20))))];
    for (const results of raced) {
      expect(results.filter((r) => r.status === 'claimed')).toEqual([expect.objectContaining({ attempt: 2 })]);
      expect(results.filter((r) => r.status === 'in-progress')).toHaveLength(19);
    }
  };

  it('gives a released claim to exactly one of 20 concurrent claims, as its second attempt', async () => {
    await takeover(5_000, async (claimed) => {
      for (const { k, token } of claimed) expect(await store().release(k, token)).toBe(true);
    });
  });

  it('gives a lapsed claim to exactly one of 20 concurrent claims, as its second attempt', async () => {
    await takeover(SHORT_LEASE_MS, async () => {
      // A witness claimed after the keys with the same lease: once it lapses on the store's clock, so have they.
      const witness = key();
      expect((await store().claim(witness, SHORT_LEASE_MS)).status).toBe('claimed');
      await lapse(witness, SHORT_LEASE_MS);
    });
  });

  // Only a shared backend can be reached by several clients; the memory store lives in one.
  if (subject.shared)
    it('gives exactly one claim across several clients of one backend', async () => {
      for (let round = 0; round < 20; round++) {
        const results = await race(key(), 40);
        expect(results.filter((r) => r.status === 'claimed')).toHaveLength(1);
      }
    });
}
