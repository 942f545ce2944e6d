import { beforeAll, describe, expect, it } from 'vitest';
import { row, runLoad, type LoadResult } from '@payhook/test-support/load-run';
import { requirePostgres } from '@payhook/test-support/services';
import { buildNextExample, EXAMPLES } from '@payhook/test-support/apps/examples';

/**
 * Load at CI size: 10,000 deliveries in all (30% duplicate copies, a quarter of the transactions
 * reordered) from the reference dispatcher to the examples on the Postgres store, 2,500 each to
 * Express, Fastify and Hono and 1,000 to Next (its server is the slowest; the whole file stays
 * near 2 minutes); every (reference, event) handled exactly once. `PAYHOOK_LOAD_DELIVERIES=10000`
 * runs the full size for each (or `./node_modules/.bin/tsx bench/load.ts`, which writes
 * BENCHMARKS.md "## Load").
 */
const SIZES: Record<(typeof EXAMPLES)[number], number> = { express: 2_500, fastify: 2_500, hono: 2_500, next: 1_000 };
const sizeOf = (example: (typeof EXAMPLES)[number]) => Number(process.env.PAYHOOK_LOAD_DELIVERIES ?? SIZES[example]);
const databaseUrl = await requirePostgres();

describe.skipIf(!databaseUrl)('load: deliveries with duplicates and reordering, each example on Postgres', () => {
  beforeAll(buildNextExample, 300_000);
  const results: LoadResult[] = [];

  it.each(EXAMPLES.map((e) => [e, sizeOf(e)] as const))(
    '%s: %i deliveries, every (reference, event) handled exactly once',
    async (example, deliveries) => {
      const r = await runLoad({ example, deliveries, databaseUrl: databaseUrl! });
      results.push(r);
      console.info(`[load] ${row(r)}`);
      const context = JSON.stringify({ statuses: r.statuses, failures: r.failures, wrong: r.wrongCounts.slice(0, 5) });
      if (r.wrongCounts.length || r.notDelivered || r.doneRecords !== r.uniqueEvents)
        console.error(`[load] ${example}: ${context}\n${r.exampleOutput}`);
      expect(r.deliveries).toBe(deliveries);
      expect(r.duplicateCopies).toBe(Math.round(deliveries * 0.3));
      expect(r.reorderedTransactions).toBeGreaterThan(0);
      expect(r.wrongCounts, context).toEqual([]);
      expect(r.doneRecords, context).toBe(r.uniqueEvents);
      expect(r.notDelivered, context).toBe(0);
      // The only 5xx the receiver may give here is 503 (store busy or unreachable: retried by the service); never 500.
      expect(
        Object.keys(r.statuses).filter((s) => s.startsWith('5') && s !== '503'),
        context,
      ).toEqual([]);
      expect(r.duplicatesSeen).toBe(r.duplicateCopies);
    },
    240_000,
  );
});
