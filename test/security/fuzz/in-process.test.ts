import { FUZZ_SEED, FUZZ_TOTAL, fuzzRuns } from '@payhook/test-support/hostile-bodies';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { caseArb } from './cases.js';
import { check, prototypeSnapshot } from './oracle.js';
import { planArb, sendPlan } from './plans.js';
import { startTargets, type Target } from './targets.js';

/**
 * Fuzz of the receiver through every adapter, in process (a fetch Request, Fastify's inject, or
 * one kept-alive connection to a live server): random and hostile bodies and headers. Whatever
 * arrives: no crash, no 5xx except the documented 500 of a handler that threw, no handler run
 * without a valid signature over the exact bytes, and Object.prototype untouched. And the other
 * way round: valid deliveries, among hostile ones, get 200 and run the handler once per event.
 *
 * CI runs 10,000+ cases (most here, in process; a share over real sockets per adapter in
 * sockets.test.ts, through `next start` in next-start.test.ts, and through core's signature
 * diagnosis in packages/core/test/observing/diagnose.test.ts);
 * `PAYHOOK_FUZZ_RUNS=200000 npx vitest run test/security/fuzz` runs more, in the same shares.
 */

// In-process shares add up to 90% of the total (sockets.test.ts takes 10%, split over the five servers).
const IN_PROCESS: [string, number][] = [
  ['core', 0.25],
  ['hono', 0.15],
  ['fastify', 0.15],
  ['next app router', 0.15],
  ['express', 0.12],
  ['next pages router', 0.08],
];

let targets: Record<string, Target> = {};
beforeAll(async () => {
  const started = await startTargets();
  targets = started.targets;
  return () => started.close();
});

describe(`receiver fuzz in process (seed ${FUZZ_SEED}, ${FUZZ_TOTAL} cases in all)`, () => {
  const before = prototypeSnapshot();

  describe.each(IN_PROCESS)('%s in process', (name, share) => {
    it(`${fuzzRuns(share)} cases: no crash, no unexpected 5xx, no handler without a valid signature`, async () => {
      const t = targets[name]!;
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          const { calls, threw } = t.counted;
          const answer = await t.inProcess!(c);
          check(name, c, answer, t.counted.calls - calls, t.counted.threw - threw);
        }),
        { seed: FUZZ_SEED, numRuns: fuzzRuns(share) },
      );
      expect(t.counted.calls).toBeGreaterThan(0);
    }, 300_000);

    it(`${fuzzRuns(share / 5)} plans of valid deliveries among hostile ones: each answered 200, each event handled once`, async () => {
      const t = targets[name]!;
      await fc.assert(
        fc.asyncProperty(planArb, (plan) => sendPlan(t, name, t.inProcess!, plan, false)),
        { seed: FUZZ_SEED + 4, numRuns: fuzzRuns(share / 5) },
      );
    }, 300_000);
  });

  it('Object.prototype is unchanged after every case', () => {
    expect(prototypeSnapshot()).toEqual(before);
    expect(before[1]).toBeUndefined();
  });
});
