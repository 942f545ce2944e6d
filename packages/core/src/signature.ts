import { createHmac, timingSafeEqual } from 'node:crypto';

/** The raw body as received: bytes, or a string hashed as its UTF-8 bytes. Never a parsed object. */
export type RawBody = Uint8Array | string;

export type VerifyResult =
  | { ok: true; secretIndex: number }
  | { ok: false; reason: 'missing' | 'malformed' | 'mismatch' | 'no-secret' };

const PREFIX = 'sha256=';
// Exactly the service's form: lower-case hex, 64 digits. A duplicated header arrives comma-joined and fails here.
const HEADER = /^sha256=[0-9a-f]{64}$/;

/**
 * Sign a body the way the service does: `sha256=` + lower-case hex HMAC-SHA256 of the raw bytes.
 *
 * @example
 * const header = sign(rawBody, process.env.PAYHOOK_WEBHOOK_SECRET!);
 * await fetch(url, { method: 'POST', body: rawBody, headers: { 'x-service-signature': header } });
 */
export function sign(body: RawBody, secret: string): string {
  return PREFIX + createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * Check an `X-Service-Signature` header against the raw body, in constant time. Accepts a list of
 * secrets (rotation) and says which one matched. Never throws: any header it cannot use is
 * `missing` or `malformed`.
 *
 * @example
 * const result = verifySignature(rawBody, req.headers['x-service-signature'], [newSecret, oldSecret]);
 * if (!result.ok) return new Response(null, { status: 401 });
 */
export function verifySignature(
  body: RawBody,
  header: unknown,
  secretOrSecrets: string | readonly string[],
): VerifyResult {
  if (header === undefined || header === null || header === '') return { ok: false, reason: 'missing' };
  if (typeof header !== 'string' || !HEADER.test(header)) return { ok: false, reason: 'malformed' };
  const secrets = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : secretOrSecrets;
  const given = Buffer.from(header.slice(PREFIX.length), 'hex');
  let matched = -1;
  // Every secret is tried, so the time taken does not tell which one matched.
  for (let i = 0; i < secrets.length; i++) {
    const secret = secrets[i];
    if (typeof secret !== 'string' || secret === '') continue;
    const expected = createHmac('sha256', secret).update(body).digest();
    if (timingSafeEqual(expected, given) && matched < 0) matched = i;
  }
  if (secrets.length === 0) return { ok: false, reason: 'no-secret' };
  return matched >= 0 ? { ok: true, secretIndex: matched } : { ok: false, reason: 'mismatch' };
}
