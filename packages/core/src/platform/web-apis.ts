import type { Hashable, PublishReport, SyncHmac } from './platform.js';

/** Workers, edge functions and browsers: no synchronous HMAC; signatures go through Web Crypto. */
export const syncHmac: SyncHmac | null = null;

/** No synchronous hash: bodies are hashed with Web Crypto. */
export const sha256Hex: ((body: Hashable) => string) | null = null;

/** workerd cancels a request's timers once it is answered: each delivery sets its own budget timer. */
export const timersOutliveRequests = false;

/** No `node:diagnostics_channel` in this build. */
export const publishReport: PublishReport | undefined = undefined;
