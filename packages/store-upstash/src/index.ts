/**
 * `@payhook/store-upstash`: the Upstash Redis store: exactly-once webhook handling over HTTP (Vercel,
 * Netlify, Deno Deploy, Cloudflare Workers).
 *
 * @module
 */
export { upstashStore, type UpstashStore, type UpstashStoreOptions } from './upstash-store.js';
