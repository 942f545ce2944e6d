/**
 * `@payhook/store-durable-object`: the store for Cloudflare Workers, in Durable Objects: exactly-once
 * webhook handling across a Worker's isolates.
 *
 * @module
 */
export { durableObjectStore, type DurableObjectStoreOptions, type StoreNamespace } from './durable-object-store.js';
export { PayhookStoreObject, type StoreObjectState } from './store-object.js';
