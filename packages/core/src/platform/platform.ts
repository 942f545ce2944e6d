import type { RawBody } from '../signature.js';

// What differs between platforms, chosen by the package's export conditions (`#platform` in
// package.json), never by probing the runtime: `node`, `bun` and `deno` get ./node.ts; workers,
// edge functions, browsers and anything else get ./web.ts.

/** Synchronous HMAC-SHA256 (node:crypto, imported statically); `null` where only Web Crypto exists. */
export interface SyncHmac {
  /** The secret as key bytes, prepared once. */
  key(secret: string): Uint8Array;
  digest(key: Uint8Array, body: RawBody): Uint8Array;
  /** 64 lower-case hex digits to 32 bytes, or undefined. */
  fromHex(hex: string): Uint8Array | undefined;
  equal(a: Uint8Array, b: Uint8Array): boolean;
}
