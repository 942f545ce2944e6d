import type { RawBody } from '../signature.js';

/**
 * Synchronous HMAC-SHA256, where the platform has it. Chosen by the package's export conditions
 * (`#crypto` in package.json), never by probing the runtime: Node, Bun and Deno get node:crypto,
 * imported statically; workers, edge functions and browsers get `null` and use Web Crypto.
 */
export interface SyncHmac {
  /** The secret as key bytes, prepared once. */
  key(secret: string): Uint8Array;
  digest(key: Uint8Array, body: RawBody): Uint8Array;
  /** 64 lower-case hex digits to 32 bytes, or undefined. */
  fromHex(hex: string): Uint8Array | undefined;
  equal(a: Uint8Array, b: Uint8Array): boolean;
}
