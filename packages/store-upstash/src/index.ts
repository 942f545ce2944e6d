export { upstashStore, type UpstashStore, type UpstashStoreOptions } from './upstash-store.js';
