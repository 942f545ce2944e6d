import { bodyUnavailable } from '../body-unavailable.js';
import { isRawBody, type RawBody } from '../signature.js';
import { reportOf, type DeliveryReport } from './outcome.js';

/**
 * What an adapter learned of a request: its method, its signature header, and either the raw
 * bytes or why there are none. Adapters only report; every answer is decided by `intake`.
 */
export interface RawDelivery {
  method: string;
  /** The signature header as the framework gives it (a string, a list, or absent). */
  signature: unknown;
  /** When `signature` is absent: another known signature header the request carried (`signatureHeaderSeen`). */
  signatureHeaderSeen?: string;
  /** The untouched body bytes; absent when `problem` says why. */
  body?: RawBody;
  /**
   * Why there is no body: over the size limit while streaming (`too-large`), still arriving after
   * `bodyTimeoutMs` (`too-slow`), read or parsed by something before payhook (`unavailable`), or
   * broke off mid-upload (`unreadable`).
   */
  problem?: 'too-large' | 'too-slow' | 'unavailable' | 'unreadable';
  /** What a body parser left on the request, for the error that says how to mount payhook. */
  parsed?: unknown;
  /** The error behind `unreadable` (or a more precise one for `unavailable`), for the logs. */
  error?: unknown;
  /** The framework's name, so that the error for an unavailable body names its fix. */
  framework?: string;
}

const encoder = new TextEncoder();

/**
 * The first step: method, then body. Returns the report that ends the delivery here, or the body
 * to verify. Oversized bodies end before any HMAC work.
 */
export function intake(delivery: RawDelivery, maxBodyBytes: number): DeliveryReport | RawBody {
  if (delivery.method !== 'POST' && delivery.method.toUpperCase() !== 'POST') return reportOf('method-not-allowed');
  const { body, problem } = delivery;
  if (problem === 'too-large') return reportOf('too-large');
  if (problem === 'too-slow') return reportOf('too-slow');
  // Aborted uploads, and a Content-Length that does not match the bytes sent.
  if (problem === 'unreadable') return reportOf('malformed', { error: delivery.error });
  if (problem === 'unavailable' || body === undefined) {
    return reportOf('body-unavailable', { error: delivery.error ?? new Error(bodyUnavailable(delivery.framework, delivery.parsed)) });
  }
  // An adapter's caller handed over something else than the bytes (a parsed object, say).
  if (!isRawBody(body)) {
    return reportOf('body-unavailable', { error: new Error(bodyUnavailable(delivery.framework, body)) });
  }
  const size =
    typeof body === 'string' ? (body.length * 3 > maxBodyBytes ? encoder.encode(body).byteLength : body.length) : body.byteLength;
  return size > maxBodyBytes ? reportOf('too-large') : body;
}

export const isReport = (value: DeliveryReport | RawBody): value is DeliveryReport => typeof value === 'object' && 'outcome' in value;
