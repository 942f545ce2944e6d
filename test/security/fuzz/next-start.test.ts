import { FUZZ_SEED, FUZZ_TOTAL, fuzzRuns } from '@payhook/test-support/hostile-bodies';
import { buildNextExample, freePort, type RunningExample, startExample } from '@payhook/test-support/apps/examples';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseArb, SECRET } from './cases.js';
import { check, prototypeSnapshot } from './oracle.js';
import { viaSocket } from './senders.js';

/**
 * Fuzz of the Next example as it is deployed: built, under `next start`, over raw sockets. The
 * same oracle as for the adapters in process (in-process.test.ts), with the example's handler,
 * which never throws, and Next's own body limit.
 */

describe(`the Next example under \`next start\`, over raw sockets (seed ${FUZZ_SEED}, ${FUZZ_TOTAL} cases in all)`, () => {
  const before = prototypeSnapshot();
  let app: RunningExample | undefined;
  beforeAll(async () => {
    await buildNextExample();
    const port = await freePort();
    // The example only receives here; its client is never called.
    app = await startExample(
      'next',
      {
        PORT: String(port),
        PAYHOOK_BASE_URL: 'http://127.0.0.1:9',
        PAYHOOK_API_KEY: 'sk_test_fuzz_unused_key',
        PAYHOOK_WEBHOOK_SECRET: SECRET,
      },
      240_000,
    );
  }, 300_000);
  afterAll(() => app?.stop());

  /** Handler runs so far, seen through the example's own orders (the fuzz's merchant references). */
  const handled = async () => {
    let n = 0;
    for (const mr of ['ok', 'throw', 'order-1']) {
      const order = (await (await fetch(`${app!.url}/orders/${mr}`)).json()) as { events?: string[] };
      n += order.events?.length ?? 0;
    }
    return n;
  };

  it(`${fuzzRuns(0.01)} cases through Next's own server: no crash, no 5xx, no handler without a valid signature`, async () => {
    const port = Number(new URL(app!.url).port);
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const before = await handled();
        const answer = await viaSocket(port, c);
        // Its handler never throws: no 500 is allowed at all (thrown = 0). Its body limit is the default 1 MiB.
        check('next example socket', c, answer, (await handled()) - before, 0, true, 1024 * 1024);
      }),
      { seed: FUZZ_SEED + 2, numRuns: fuzzRuns(0.01) },
    );
    expect(await handled()).toBeGreaterThan(0);
  }, 300_000);

  it('Object.prototype is unchanged after every case', () => {
    expect(prototypeSnapshot()).toEqual(before);
    expect(before[1]).toBeUndefined();
  });
});
