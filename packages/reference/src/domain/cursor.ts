import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface CursorCodec {
  /** An opaque, signed cursor that continues after `position` for the query `binding`. */
  encode(position: number, binding: string): string;
  /** The position, or why the cursor cannot be used. */
  decode(cursor: string, binding: string): { ok: true; position: number } | { ok: false; reason: 'malformed' | 'expired' };
}

export interface CursorOptions {
  /** HMAC key. Default: random per service, so cursors do not survive a restart. */
  secret?: string;
  /** How long a cursor stays valid. Default 15 minutes. */
  lifetimeMs?: number;
  now: () => number;
}

/**
 * List cursors: `base64url(json).base64url(hmac)`. The HMAC makes them tamper-evident; the
 * binding (merchant, mode and filters) makes a cursor useless with a different query.
 *
 * @example
 * const cursors = createCursorCodec({ now: clock.now });
 * const next = cursors.encode(lastSeq, binding);
 */
export function createCursorCodec(options: CursorOptions): CursorCodec {
  const secret = options.secret ?? randomBytes(32).toString('hex');
  const lifetimeMs = options.lifetimeMs ?? 15 * 60 * 1000;
  const mac = (text: string) => createHmac('sha256', secret).update(text).digest();
  return {
    encode(position, binding) {
      const body = Buffer.from(JSON.stringify({ p: position, e: options.now() + lifetimeMs })).toString('base64url');
      return `${body}.${mac(`${body}|${binding}`).toString('base64url')}`;
    },
    decode(cursor, binding) {
      const [body, sig, extra] = cursor.split('.');
      if (!body || !sig || extra !== undefined) return { ok: false, reason: 'malformed' };
      const given = Buffer.from(sig, 'base64url');
      const expected = mac(`${body}|${binding}`);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'malformed' };
      let payload: { p?: unknown; e?: unknown };
      try {
        payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        return { ok: false, reason: 'malformed' };
      }
      if (typeof payload.p !== 'number' || typeof payload.e !== 'number') return { ok: false, reason: 'malformed' };
      if (options.now() >= payload.e) return { ok: false, reason: 'expired' };
      return { ok: true, position: payload.p };
    },
  };
}
