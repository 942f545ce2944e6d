import { sign } from '@payhook/core';
import { createEvent } from '@payhook/testing';
import { FUZZ_SEED, FUZZ_TOTAL, fuzzRuns } from '@payhook/test-support/hostile-bodies';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { caseArb, SECRET } from './cases.js';
import { check, prototypeSnapshot } from './oracle.js';
import { planArb, sendPlan } from './plans.js';
import { viaSocket } from './senders.js';
import { startTargets, type Target } from './targets.js';

/**
 * Fuzz of the receiver through every adapter's live Node server, over raw sockets: header names
 * upper-case and repeated as sent, bodies chunked at random points, a Content-Length that lies,
 * a 20 MiB upload. The same oracle as in process (in-process.test.ts), where a lying length or an
 * oversized upload may also end in a closed connection; and valid deliveries among hostile ones
 * still get 200 and run the handler once per event.
 */

// Sockets take 10% of the total, split over the five servers.
const SOCKETS = ['core', 'hono', 'fastify', 'express', 'next pages router'];

let targets: Record<string, Target> = {};
beforeAll(async () => {
  const started = await startTargets();
  targets = started.targets;
  return () => started.close();
});

describe(`receiver fuzz over raw sockets (seed ${FUZZ_SEED}, ${FUZZ_TOTAL} cases in all)`, () => {
  const before = prototypeSnapshot();

  describe.each(SOCKETS)('%s over raw sockets', (name) => {
    it(`${fuzzRuns(0.02)} cases: upper-case and repeated header lines, chunked bodies, lying Content-Length`, async () => {
      const t = targets[name]!;
      await fc.assert(
        fc.asyncProperty(caseArb, async (c) => {
          const { calls, threw } = t.counted;
          const answer = await viaSocket(t.port!, c);
          check(`${name} socket`, c, answer, t.counted.calls - calls, t.counted.threw - threw, true);
        }),
        { seed: FUZZ_SEED + 1, numRuns: fuzzRuns(0.02) },
      );
    }, 300_000);

    it(`${fuzzRuns(0.01)} plans of valid deliveries among hostile ones, chunked and in any header case: each answered 200, each event handled once`, async () => {
      const t = targets[name]!;
      await fc.assert(
        fc.asyncProperty(planArb, (plan) => sendPlan(t, `${name} socket`, (c) => viaSocket(t.port!, c), plan, true)),
        { seed: FUZZ_SEED + 5, numRuns: fuzzRuns(0.01) },
      );
    }, 300_000);

    it('a 20 MiB chunked upload is cut off with 413 (or a closed connection) quickly, and the server still serves', async () => {
      const t = targets[name]!;
      const started = performance.now();
      const body = Buffer.alloc(20 * 1024 * 1024, 0x20);
      const answer = await viaSocket(t.port!, {
        method: 'POST',
        headers: [['x-service-signature', sign(body, SECRET)]],
        body,
        validSignature: true,
        pollutes: false,
        badUtf8: false,
        chunks: Array.from({ length: 40 }, (_, i) => (i + 1) * 512 * 1024),
        lie: 'none',
      });
      expect([413, null]).toContain(answer.status);
      expect(performance.now() - started).toBeLessThan(5_000);
      const event = JSON.stringify(createEvent('payment.success'));
      const ok = await viaSocket(t.port!, {
        method: 'POST',
        headers: [['x-service-signature', sign(event, SECRET)]],
        body: Buffer.from(event),
        validSignature: true,
        pollutes: false,
        badUtf8: false,
        chunks: [],
        lie: 'none',
      });
      expect(ok.status).toBe(200);
    }, 30_000);
  });

  it('Object.prototype is unchanged after every case', () => {
    expect(prototypeSnapshot()).toEqual(before);
    expect(before[1]).toBeUndefined();
  });
});
