/**
 * `@payhook/store-sqlite/sql`: the store contract over SQLite's dialect on any synchronous
 * connection, for a store on another SQLite host. `@payhook/store-durable-object` runs it in a
 * Durable Object's own database. It opens no file and loads no driver.
 *
 * @module
 */
export { claimsOver, type Claims, type ClaimsOptions } from './claims.js';
export type { Connection, Statement } from './driver.js';
