/**
 * `@payhook/store-postgres`: the PostgreSQL store: exactly-once webhook handling across processes.
 *
 * @module
 */
export { postgresStore, type PostgresStore, type PostgresStoreOptions } from './postgres-store.js';
export type { TransactionalEffect, TransactionalOptions } from './transactional.js';
export type { PurgeOptions } from './purge.js';
export { DEFAULT_TABLE, schemaSql } from './sql/schema.js';
