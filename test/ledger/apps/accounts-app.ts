/**
 * A platform's webhook module (issue 50), as the `payhook` command loads it (`--app
 * test/ledger/apps/accounts-app.ts`): one receiver for the accounts in ACCOUNT_SECRETS, on a SQLite file
 * with its ledger. LEDGER_SQLITE_PATH is the file; ACCOUNT_SECRETS a JSON object of name to secret.
 */
import { createReceiver } from '@payhook/core';
import { sqliteStore } from '@payhook/store-sqlite';
import Database from 'better-sqlite3';

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`[accounts app] set ${name}`);
  return v;
};
const secrets = JSON.parse(env('ACCOUNT_SECRETS')) as Record<string, string>;

export const store = sqliteStore({ path: env('LEDGER_SQLITE_PATH'), driver: Database, ledger: true });

export const receiver = createReceiver({
  store,
  logger: () => {},
  accounts: { resolve: (name) => (Object.hasOwn(secrets, name) ? { secret: secrets[name]! } : undefined) },
}).on('payment.success', () => {});
