import { sha256Hex } from '#platform';
import { errorMessage } from '../base/errors.js';
import { escapeText } from '../base/escape-text.js';
import { isRefusal, textOf, type LedgerEntry } from '../storage/ledger.js';
import { deadLetterReason } from '../protocol/outcomes.js';
import type { RawBody } from '../protocol/signature.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import type { Trace } from '../contracts/delivery.js';

/** Longest reference or event name a record keeps; a longer one is cut and ends with '…'. */
export const MAX_NAME = 128;
/** Longest signature header a record keeps: the service's is `sha256=` and 64 hex digits (71). */
export const MAX_SIGNATURE_HEADER = 80;
/** Longest `bodyPrefix` of a refusal, escapes included. */
export const MAX_BODY_PREFIX = 64;
/** Largest unverified body parsed for the reference and event it names. */
const MAX_NAMES_BODY = 4096;

/** A record's metadata, with the body to store (`raw` for a ledger that takes bytes) or its hash and prefix. */
export type Draft = LedgerEntry & { raw?: RawBody };

/** Whether a delivery will be recorded as a refusal, before its record is made. */
export const refused = (trace: Trace): boolean => isRefusal({ source: trace.source, signature: signatureOf(trace) });

const signatureOf = (trace: Trace): LedgerEntry['signature'] =>
  trace.verified === undefined ? 'not-checked' : trace.verified ? 'valid' : 'invalid';

/**
 * The record, every field in one literal (absent ones undefined, which JSON leaves out), so that
 * all records share one shape. Every field the sender controls is cut to a bound here, before any
 * store sees it; the body is added by `withBody`.
 */
export function entryOf(trace: Trace, r: DeliveryReport, now: () => number): Draft {
  // A refused or unreadable delivery still names its reference, so a query for it finds why (unverified: see `signature`).
  const names = r.reference === undefined && trace.body !== undefined ? namesIn(trace.body) : r;
  // A reconcile's failure has no service retry behind it: it goes to the dead letters too.
  const reason = deadLetterReason(r.outcome, trace.source === 'reconcile' ? 'reconcile' : 'answer');
  return {
    id: trace.id,
    receivedAt: trace.receivedAt,
    source: trace.source,
    account: r.account,
    reference: cut(names.reference, MAX_NAME),
    event: cut(names.event, MAX_NAME),
    dedupeKey: r.dedupeKey,
    outcome: r.outcome,
    status: r.status,
    durationMs: r.durationMs ?? 0,
    attempt: r.attempt,
    signature: signatureOf(trace),
    secretIndex: r.secretIndex,
    signatureHeader: typeof trace.signatureHeader === 'string' ? cut(trace.signatureHeader, MAX_SIGNATURE_HEADER) : undefined,
    body: undefined,
    bodyEncoding: undefined,
    bodySha256: undefined,
    bodyPrefix: undefined,
    raw: undefined,
    error: r.error === undefined ? undefined : errorMessage(r.error),
    deadLetter: reason === undefined ? undefined : { reason, at: now() },
    replayOf: trace.replayOf,
    forced: trace.replayOf === undefined ? undefined : trace.forced === true,
  };
}

/**
 * Adds the body as the ledger keeps it: a refusal's as its SHA-256 and a printable prefix only
 * (anyone can send one, of any size); otherwise the bytes (`raw`, when the ledger takes them), the
 * text, or in `hash` mode the SHA-256.
 */
export function withBody(e: Draft, body: RawBody | undefined, mode: 'keep' | 'hash', bytes: boolean): Draft | Promise<Draft> {
  if (body === undefined) return e;
  if (isRefusal(e)) {
    e.bodyPrefix = prefixOf(body);
    return withHash(e, body);
  }
  if (mode === 'hash') return withHash(e, body);
  if (bytes) e.raw = body;
  else {
    const text = textOf(body);
    e.body = text.body;
    e.bodyEncoding = text.bodyEncoding;
  }
  return e;
}

function withHash(e: Draft, body: RawBody): Draft | Promise<Draft> {
  if (sha256Hex) {
    e.bodySha256 = sha256Hex(body);
    return e;
  }
  return sha256(body).then((hex) => ((e.bodySha256 = hex), e));
}

/** `s` cut to at most `max` characters, the last one '…', never between the halves of a surrogate pair. */
export function cut(s: string | undefined, max: number): string | undefined {
  if (s === undefined || s.length <= max) return s;
  let end = max - 1;
  if (/[\uD800-\uDBFF]/.test(s[end - 1]!)) end -= 1;
  return `${s.slice(0, end)}…`;
}

/** At most MAX_BODY_PREFIX printable characters from the body's start, decoded as UTF-8 with replacement. */
export function prefixOf(body: RawBody): string {
  // Four bytes per character at most: the bytes a prefix can need, and no more are decoded.
  const head =
    typeof body === 'string'
      ? body.slice(0, MAX_BODY_PREFIX + 1)
      : new TextDecoder().decode(body.subarray(0, 4 * MAX_BODY_PREFIX), { stream: true });
  const printable = escapeText(head, true);
  if (printable.length <= MAX_BODY_PREFIX) return printable;
  // Never end inside an escape or a surrogate pair.
  let end = MAX_BODY_PREFIX;
  const escapeAt = printable.lastIndexOf('\\u', end);
  if (escapeAt > end - 6 && /^\\u[0-9a-f]{4}/.test(printable.slice(escapeAt, escapeAt + 6))) end = escapeAt;
  if (/[\uD800-\uDBFF]/.test(printable[end - 1]!)) end -= 1;
  return printable.slice(0, end);
}

/** The reference and event an unverified body names, read only from a small body: never a big or deep parse, never a throw. */
export function namesIn(body: RawBody): Pick<LedgerEntry, 'reference' | 'event'> {
  if (body.length > MAX_NAMES_BODY) return {};
  try {
    const value: unknown = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
    if (typeof value !== 'object' || value === null) return {};
    const { reference, event } = value as { reference?: unknown; event?: unknown };
    return { ...(typeof reference === 'string' && { reference }), ...(typeof event === 'string' && { event }) };
  } catch {
    return {};
  }
}

async function sha256(body: RawBody): Promise<string> {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}
