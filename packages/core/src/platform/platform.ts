import type { createHmac, timingSafeEqual } from 'node:crypto';

// What differs between platforms, chosen by the package's export conditions (`#platform` in
// package.json), never by probing the runtime: `node`, `bun` and `deno` get ./node-apis.ts; workers,
// edge functions, browsers and anything else get ./web-apis.ts.

/** Synchronous HMAC-SHA256 (node:crypto, imported statically); `null` where only Web Crypto exists. */
export interface SyncHmac {
  // node:crypto's own functions, which the verifier calls directly, as before this module existed.
  createHmac: typeof createHmac;
  timingSafeEqual: typeof timingSafeEqual;
  /** The secret as key bytes, prepared once. */
  key(secret: string): Uint8Array;
  /** 64 lower-case hex digits to 32 bytes, or undefined. */
  fromHex(hex: string): Uint8Array | undefined;
}

/** What the platform hashes: bytes, or text hashed as its UTF-8 bytes (the same as a raw body). */
export type Hashable = Uint8Array | string;

/** Hands a delivery's report to the platform's own channel (`node:diagnostics_channel`), when it has one. */
export type PublishReport = (report: object) => void;
