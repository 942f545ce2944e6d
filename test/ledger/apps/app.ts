/**
 * A merchant's webhook module as the `payhook` command loads it (`--app test/ledger/apps/app.ts`): a
 * receiver on a Postgres store with a ledger. Configured by env:
 *
 *   LEDGER_PG_URL  the database; LEDGER_TABLE its store table; LEDGER_RUN the test run
 *   APP_FIXED      1 once the merchant has fixed the handlers: until then a payment is refused with
 *                  NonRetriableError (the order system does not know it yet) and a cancellation
 *                  fails after the 202 (the inventory service is down)
 *
 * Each handler that gets through records its effect in payhook_test_effects, once per run.
 */
import { createReceiver, NonRetriableError } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`[ledger app] set ${name}`);
  return v;
};
const fixed = process.env.APP_FIXED === '1';
const run = env('LEDGER_RUN');

export const store = postgresStore({ connectionString: env('LEDGER_PG_URL'), table: env('LEDGER_TABLE'), ledger: true });

export const receiver = createReceiver({
  secret: env('LEDGER_SECRET'),
  store,
  // Room for a claim on a busy machine: a payment refused within it is 200 rejected, as the test expects.
  budgetMs: 2000,
  logger: () => {},
})
  .on('payment.success', async (event, ctx) => {
    if (!fixed) throw new NonRetriableError(`order ${event.merchantReference} is unknown to the order system`);
    await store.pool.query('insert into payhook_test_effects (run, key, attempt) values ($1, $2, $3)', [
      run,
      `${event.reference}:${event.event}`,
      ctx.attempt,
    ]);
  })
  .on('payment.cancelled', async (event, ctx) => {
    if (!fixed) {
      // Past the 2,000 ms budget: answered 202, then it fails.
      await new Promise((r) => setTimeout(r, 2500));
      throw new Error('the inventory service is down');
    }
    await store.pool.query('insert into payhook_test_effects (run, key, attempt) values ($1, $2, $3)', [
      run,
      `${event.reference}:${event.event}`,
      ctx.attempt,
    ]);
  });
