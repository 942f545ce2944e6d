/**
 * A merchant's webhook module for the `payhook` command (`--app test/ledger/apps/trust-app.ts`), on a
 * Redis or Postgres store with a ledger, with or without a client. Configured by env:
 *
 *   TRUST_STORE     redis | postgres; TRUST_URL its URL; TRUST_NAME the key prefix or the table
 *   TRUST_SECRET    the webhook secret
 *   TRUST_BASE_URL, TRUST_API_KEY   the service and key for `client`; no client when unset
 *   TRUST_EFFECTS   the Postgres where each handler run is recorded (payhook_test_effects), under TRUST_RUN
 */
import { createClient } from '@payhook/client';
import { createReceiver } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import pg from 'pg';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`[trust app] set ${name}`);
  return v;
};
const name = env('TRUST_NAME');
const url = env('TRUST_URL');

export const store =
  env('TRUST_STORE') === 'redis'
    ? redisStore({ url, prefix: `${name}:`, ledger: true, checkDurability: false })
    : postgresStore({ connectionString: url, table: name, ledger: true });
// The command exits with process.exit once it is done: the pool needs no closing.
const effects = new pg.Pool({ connectionString: env('TRUST_EFFECTS'), max: 1, allowExitOnIdle: true });
const client = process.env.TRUST_API_KEY ? createClient({ apiKey: process.env.TRUST_API_KEY, baseUrl: env('TRUST_BASE_URL') }) : undefined;

export const receiver = createReceiver({ secret: env('TRUST_SECRET'), store, client, logger: () => {} }).onAny(async (event, ctx) => {
  await effects.query('insert into payhook_test_effects (run, key, attempt) values ($1, $2, $3)', [
    env('TRUST_RUN'),
    `${event.reference}:${event.event}:${event.amount}`,
    ctx.attempt,
  ]);
});
