// The queue contract (contract.ts) on each engine: in the `payhook` project on the newest peers,
// in `lowest-peers` on the lowest the ranges allow (vitest.config.ts). And a platform's accounts
// through the queue (accounts-contract.ts), on an engine of its own (pg-boss: a schema of its own).
import { DATABASE_URL, requirePostgres, requireRedis } from '@payhook/test-support/services';
import { queueAccountsContract } from './accounts-contract.js';
import { queueContract } from './contract.js';
import { ENGINES, type EngineName } from './engines.js';

const servicesUp = (await requirePostgres()) !== undefined && (await requireRedis()) !== undefined;

for (const name of Object.keys(ENGINES) as EngineName[]) {
  queueContract(name, ENGINES[name](), { databaseUrl: DATABASE_URL, skip: !servicesUp });
  queueAccountsContract(name, ENGINES[name](), { databaseUrl: DATABASE_URL, skip: !servicesUp });
}
