// What every benchmark server shares: the secret, the floor's verify + parse, and the handler.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SECRET = 'whsec_http_bench_8d1f0c2b7a9e4f63';
export const SIGNATURE_HEADER = 'x-service-signature';
/** Keys the payhook receiver keeps: far fewer than the distinct deliveries the client rotates through, so every one is new. */
export const STORE_MAX = 4096;

/** Per-process counters: how many deliveries each route's handler ran. */
export const counts = { floor: 0, payhook: 0 };
let sink = 0;
/** The handler both routes run: the same trivial work on the parsed event. */
export function handle(route, event) {
  counts[route]++;
  sink += event.amount.length;
  return sink;
}

/**
 * The hand-written floor: HMAC-SHA256 of the raw bytes, compared in constant time, then JSON.parse.
 * Returns the parsed event, or null when the signature does not hold.
 */
export function floorVerify(raw, header) {
  if (typeof header !== 'string' || header.length !== 71 || !header.startsWith('sha256=')) return null;
  const given = Buffer.from(header.slice(7), 'hex');
  const expected = createHmac('sha256', SECRET).update(raw).digest();
  if (given.length !== expected.length || !timingSafeEqual(expected, given)) return null;
  return JSON.parse(raw.toString('utf8'));
}
