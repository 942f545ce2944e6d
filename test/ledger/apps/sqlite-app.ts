/**
 * A merchant's webhook module on one machine, as the `payhook` command loads it (`--app
 * test/ledger/apps/sqlite-app.ts`): a receiver on a SQLite file with its ledger, no Redis or Postgres.
 * LEDGER_SQLITE_PATH is the file; LEDGER_SECRET the webhook secret.
 */
import { createReceiver } from '@payhook/core';
import { sqliteStore } from '@payhook/store-sqlite';
import Database from 'better-sqlite3';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`[sqlite app] set ${name}`);
  return v;
};

export const store = sqliteStore({ path: env('LEDGER_SQLITE_PATH'), driver: Database, ledger: true });

export const receiver = createReceiver({ secret: env('LEDGER_SECRET'), store, logger: () => {} }).on('payment.success', () => {});
