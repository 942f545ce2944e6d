export { sqliteStore, type SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
