import fc from 'fast-check';
import { createReferenceService } from '@payhook/reference';
import { afterEach, describe, expect, it } from 'vitest';
import { expectError, merchants, OTHER_KEY, SANDBOX_KEY, start, type Started } from '@payhook/test-support/apps/reference-service';

const WINDOW = 60_000;
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function started(): Promise<Started> {
  const s = await start();
  cleanup.push(s.close);
  return s;
}

/** `n` list requests at once over real HTTP; their statuses. */
const burst = async (s: Started, n: number, key = SANDBOX_KEY) =>
  (await Promise.all(Array.from({ length: n }, () => s.call('GET', '/v1/transactions', { key })))).map((r) => r.status);

describe('the rate limit is a sliding window: never more than 100 requests in any 60 s', () => {
  it('100 at the end of one minute and 100 at the start of the next: the second 100 get 429', async () => {
    const s = await started();
    await s.service.clock.advance(59_000);
    expect(await burst(s, 100)).toEqual(Array(100).fill(200));
    // A fixed window would reset here, one second later.
    await s.service.clock.advance(1_000);
    const second = await burst(s, 100);
    expect(second).toEqual(Array(100).fill(429));
    const limited = await s.call('GET', '/v1/transactions');
    expectError(limited, 429, /Rate limit exceeded/);
    // The oldest request leaves the window 59 s later.
    expect(limited.headers.get('retry-after')).toBe('59');
    await s.service.clock.advance(58_999);
    expect(await burst(s, 1)).toEqual([429]);
    await s.service.clock.advance(1);
    expect(await burst(s, 100)).toEqual(Array(100).fill(200));
    expect(await burst(s, 1)).toEqual([429]);
  });

  it('rejected requests do not count, and another key of the same merchant has its own window', async () => {
    const s = await started();
    expect((await burst(s, 150)).filter((x) => x === 200)).toHaveLength(100);
    expect(await burst(s, 5, OTHER_KEY)).toEqual(Array(5).fill(200));
    await s.service.clock.advance(WINDOW);
    // The 50 rejected requests left nothing behind: a full window is available again.
    expect(await burst(s, 100)).toEqual(Array(100).fill(200));
  });

  it('property: for any schedule of bursts on the virtual clock, no 60 s span holds more than 100 accepted requests', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ wait: fc.integer({ min: 0, max: 45_000 }), n: fc.integer({ min: 1, max: 120 }) }), {
          minLength: 2,
          maxLength: 12,
        }),
        async (schedule) => {
          const service = createReferenceService({ clock: 'manual', merchants: merchants() });
          const accepted: number[] = [];
          let rejected = 0;
          for (const { wait, n } of schedule) {
            await service.clock.advance(wait);
            for (let i = 0; i < n; i++) {
              const res = await service.fetch(
                new Request('http://127.0.0.1/v1/transactions', { headers: { authorization: `Bearer ${SANDBOX_KEY}` } }),
              );
              if (res.status === 200) accepted.push(service.clock.now());
              else if (res.status === 429) rejected++;
              else throw new Error(`unexpected ${res.status}`);
            }
          }
          service.close();
          for (let i = 0; i < accepted.length; i++) {
            const inWindow = accepted.filter((t) => t > accepted[i]! - WINDOW && t <= accepted[i]!).length;
            if (inWindow > 100) return false;
          }
          // And the limiter is not stricter than the rule: a request is refused only when 100 are already in the window.
          return rejected === 0 || accepted.length >= 100;
        },
      ),
      { seed: 20261122, numRuns: 40 },
    );
  }, 60_000);
});
