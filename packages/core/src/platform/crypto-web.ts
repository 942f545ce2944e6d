import type { SyncHmac } from './crypto.js';

/** Workers, edge functions and browsers: no synchronous HMAC; signatures go through Web Crypto. */
export const syncHmac: SyncHmac | null = null;
