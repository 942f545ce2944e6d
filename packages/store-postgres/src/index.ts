export {
  postgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
  type TransactionalEffect,
} from './postgres-store.js';
export type { PurgeOptions } from './purge.js';
export { DEFAULT_TABLE, schemaSql } from './schema.js';
