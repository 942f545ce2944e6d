/**
 * `@payhook/store-sqlite`: the SQLite store: exactly-once webhook handling on one machine, durable in one
 * file that its processes share.
 *
 * @module
 */
export { sqliteStore, type SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
