import { syncHmac } from '#platform';
import type { SyncHmac } from '../platform/platform.js';

/** The raw body as received: bytes, or a string hashed as its UTF-8 bytes. Never a parsed object. */
export type RawBody = Uint8Array | string;

/** What a signature check answers: `ok`, with the index of the secret that matched; or not, with why. */
export type VerifyResult =
  | { ok: true; secretIndex: number }
  | { ok: false; reason: 'missing' | 'malformed' | 'mismatch' | 'no-secret' }
  /** The body given was not bytes nor a string (a parsed object, say): `message` says how to get the raw body. */
  | { ok: false; reason: 'not-raw-body'; message: string };

/** Whether a value is what the signature is computed over: bytes (a Buffer, a Uint8Array) or the text as received. */
export const isRawBody = (body: unknown): body is RawBody => typeof body === 'string' || ArrayBuffer.isView(body);

const NOT_RAW_BODY_MESSAGE =
  '[@payhook/core] the signature is computed over the raw body as received, and this body is not bytes nor a string (a parsed object?): ' +
  "pass the untouched bytes, e.g. express.raw({ type: '*/*' }) and req.body, or await request.text() before any JSON parsing.";

/** The header the interface names for the signature; HTTP header names are case-insensitive. */
export const SIGNATURE_HEADER = 'x-service-signature';
/** The header the real service, ePay, signs its deliveries with (its official SDKs' `SignatureHeader`). */
export const EPAY_SIGNATURE_HEADER = 'x-epay-signature';

/** What every signature header starts with. */
export const SIGNATURE_PREFIX = 'sha256=';
const PREFIX = SIGNATURE_PREFIX;

function requireSyncHmac(what: string): SyncHmac {
  if (!syncHmac) {
    throw new Error(
      `[@payhook/core] ${what} needs node:crypto, which this platform's build of @payhook/core does not load; use ${what}Async (Web Crypto) instead.`,
    );
  }
  return syncHmac;
}

/**
 * Sign a body the way the service does: `sha256=` + lower-case hex HMAC-SHA256 of the raw bytes.
 *
 * @example
 * const header = sign(rawBody, process.env.PAYHOOK_WEBHOOK_SECRET!);
 * await fetch(url, { method: 'POST', body: rawBody, headers: { 'x-service-signature': header } });
 */
export function sign(body: RawBody, secret: string): string {
  if (!isRawBody(body)) throw new TypeError(NOT_RAW_BODY_MESSAGE.replace('signature is computed', 'signature is computed (sign)'));
  return PREFIX + requireSyncHmac('sign').createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * Check an `X-Service-Signature` header against the raw body, in constant time. Accepts a list of
 * secrets (rotation) and says which one matched. Never throws: any header it cannot use is
 * `missing` or `malformed`, and a body that is not the raw bytes (or the text as received) is
 * `not-raw-body`, with a `message` that says how to get them.
 *
 * @example
 * const result = verifySignature(rawBody, req.headers['x-service-signature'], [newSecret, oldSecret]);
 * if (!result.ok) return new Response(null, { status: 401 });
 */
export function verifySignature(body: RawBody, header: unknown, secretOrSecrets: string | readonly string[]): VerifyResult {
  return createVerifier(secretOrSecrets)(body, header);
}

/**
 * `verifySignature` with the secrets turned into HMAC keys once, for checking many deliveries
 * against the same secrets (the receiver uses one).
 *
 * @example
 * const verify = createVerifier([newSecret, oldSecret]);
 * const result = verify(rawBody, request.headers.get('x-service-signature'));
 */
export function createVerifier(secretOrSecrets: string | readonly string[]): (body: RawBody, header: unknown) => VerifyResult {
  const hmac = requireSyncHmac('verifySignature');
  const { createHmac, timingSafeEqual, fromHex } = hmac;
  const list: readonly unknown[] = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : secretOrSecrets;
  const keys = Array.isArray(list) ? list.map((s) => (typeof s === 'string' && s !== '' ? hmac.key(s) : undefined)) : [];
  return (body, header) => {
    if (!isRawBody(body)) return NOT_RAW_BODY;
    const given = prepare(header, keys, fromHex);
    if (!(given instanceof Uint8Array)) return given;
    let matched = -1;
    // Every secret is tried, so the time taken does not tell which one matched.
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (key && timingSafeEqual(createHmac('sha256', key).update(body).digest(), given) && matched < 0) matched = i;
    }
    return outcome(matched);
  };
}

/**
 * `sign` on Web Crypto, for runtimes without node:crypto.
 *
 * @example
 * const header = await signAsync(body, env.WEBHOOK_SECRET);
 */
export async function signAsync(body: RawBody, secret: string): Promise<string> {
  if (!isRawBody(body)) throw new TypeError(NOT_RAW_BODY_MESSAGE.replace('signature is computed', 'signature is computed (signAsync)'));
  return PREFIX + toHex(await hmac(secret, body));
}

/**
 * `verifySignature` on Web Crypto, for runtimes without node:crypto (workers, edge functions).
 * Same rules, same results.
 *
 * @example
 * const result = await verifySignatureAsync(new Uint8Array(await request.arrayBuffer()), header, secret);
 */
export async function verifySignatureAsync(
  body: RawBody,
  header: unknown,
  secretOrSecrets: string | readonly string[],
): Promise<VerifyResult> {
  const list: readonly unknown[] = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : secretOrSecrets;
  const secrets = Array.isArray(list) ? list.map((s) => (typeof s === 'string' && s !== '' ? s : undefined)) : [];
  if (!isRawBody(body)) return NOT_RAW_BODY;
  const given = prepare(header, secrets, fromHex);
  if (!(given instanceof Uint8Array)) return given;
  let matched = -1;
  for (let i = 0; i < secrets.length; i++) {
    const secret = secrets[i];
    if (secret && equalConstantTime(await hmac(secret, body), given) && matched < 0) matched = i;
  }
  return outcome(matched);
}

/**
 * The rules both verifiers share: exactly the service's form, `sha256=` and 64 lower-case hex
 * digits (a duplicated header arrives comma-joined and fails here), and at least one usable secret
 * (undefined marks an unusable one). `decodeHex` answers undefined for anything but 32 bytes of
 * lower-case hex. Answers the digest's bytes, or the verdict when there is nothing to compare.
 */
function prepare(
  header: unknown,
  secrets: readonly unknown[],
  decodeHex: (hex: string) => Uint8Array | undefined,
): Uint8Array | VerifyResult {
  if (header === undefined || header === null || header === '') return MISSING;
  if (typeof header !== 'string' || header.length !== PREFIX.length + 64 || !header.startsWith(PREFIX)) return MALFORMED;
  const given = decodeHex(header.slice(PREFIX.length));
  if (given === undefined) return MALFORMED;
  if (!secrets.some(isUsable)) return NO_SECRET;
  return given;
}

const isUsable = (secret: unknown) => secret !== undefined;
// Frozen and shared: a verdict is allocated once, not per delivery.
const MATCHED = Array.from({ length: 8 }, (_, i): VerifyResult => Object.freeze({ ok: true, secretIndex: i }));
const MISMATCH: VerifyResult = Object.freeze({ ok: false, reason: 'mismatch' });
const MISSING: VerifyResult = Object.freeze({ ok: false, reason: 'missing' });
const MALFORMED: VerifyResult = Object.freeze({ ok: false, reason: 'malformed' });
const NO_SECRET: VerifyResult = Object.freeze({ ok: false, reason: 'no-secret' });
const NOT_RAW_BODY: VerifyResult = Object.freeze({ ok: false, reason: 'not-raw-body', message: NOT_RAW_BODY_MESSAGE });
const outcome = (matched: number): VerifyResult => (matched < 0 ? MISMATCH : (MATCHED[matched] ?? { ok: true, secretIndex: matched }));

const encoder = new TextEncoder();

async function hmac(secret: string, body: RawBody): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const data = typeof body === 'string' ? encoder.encode(body) : body;
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, data as Uint8Array<ArrayBuffer>));
}

function equalConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** 64 lower-case hex digits to 32 bytes, or undefined for anything else. */
function fromHex(hex: string): Uint8Array | undefined {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) {
    const hi = nibble(hex.charCodeAt(2 * i));
    const lo = nibble(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) return undefined;
    out[i] = (hi << 4) | lo;
  }
  return out.length === 32 ? out : undefined;
}
const nibble = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1);

function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}
