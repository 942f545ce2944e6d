import { describe, expect, it } from 'vitest';
import { manualClock } from '@payhook/testing';
import { memoryStore } from '@payhook/core';
import { storeConformance } from '@payhook/testing/store';

// A virtual clock: the lease expiry and retention tests move it instead of sleeping.
let now = Date.now();
storeConformance('memory', {
  make: () => memoryStore({ now: () => now }),
  shared: false,
  advance: (ms) => {
    now += ms;
  },
});

// The memory store's own edges, on its clock to the millisecond (issue 38: mutants at each of
// these survived the shared contract, which real servers' clocks cannot hold to a millisecond).
describe('the memory store at the edge of a lease and a retention', () => {
  let t = 0;
  const store = () => memoryStore({ now: () => t, retentionMs: 1_000, warn: false });

  it('holds a claim until the last millisecond of its lease, and lets it be taken over at its end', async () => {
    t = 0;
    const s = store();
    const first = (await s.claim('k', 100)) as { status: string; token: string };
    t = 99;
    expect(await s.claim('k', 100)).toMatchObject({ status: 'in-progress', leaseExpiresAt: 100 });
    expect(await s.get('k')).toMatchObject({ state: 'claimed', leaseExpiresAt: 100 });
    t = 100;
    expect(await s.get('k')).toEqual({ state: 'released', attempt: 1 });
    // The lapsed token can no longer finish, extend or give up the claim, taken over or not.
    expect(await s.complete('k', first.token)).toBe(false);
    expect(await s.extend('k', first.token, 100)).toBe(false);
    expect(await s.release('k', first.token)).toBe(false);
    expect(await s.claim('k', 100)).toMatchObject({ status: 'claimed', attempt: 2 });
  });

  it('answers a second complete with the same token only while the done record is kept', async () => {
    t = 0;
    const s = store();
    const { token } = (await s.claim('k', 100)) as { token: string };
    expect(await s.complete('k', token)).toBe(true);
    t = 999;
    expect(await s.complete('k', token)).toBe(true);
    expect(await s.get('k')).toMatchObject({ state: 'done' });
    t = 1_000;
    expect(await s.complete('k', token)).toBe(false);
    expect(await s.get('k')).toBeUndefined();
  });

  it('never completes a released claim, and knows nothing of a key never claimed', async () => {
    t = 0;
    const s = store();
    const { token } = (await s.claim('k', 100)) as { token: string };
    expect(await s.release('k', token)).toBe(true);
    expect(await s.complete('k', token)).toBe(false);
    expect(await s.get('k')).toEqual({ state: 'released', attempt: 1 });
    expect(await s.get('never')).toBeUndefined();
  });
});

describe('the memory store by default', () => {
  it('keeps a done record 24 hours, on the clock it is given', async () => {
    const clock = manualClock(0);
    const s = memoryStore({ clock, warn: false });
    const { token } = (await s.claim('k', 100)) as { token: string };
    await s.complete('k', token);
    await clock.advance(24 * 60 * 60 * 1000 - 1);
    expect(await s.claim('k', 100)).toMatchObject({ status: 'done', outcome: 'ok' });
    await clock.advance(1);
    expect(await s.get('k')).toBeUndefined();
  });
});
