import type { RawDelivery } from '../contracts/delivery.js';
import { bodyUnavailable } from '../reading/body-unavailable.js';
import { isRawBody, type RawBody } from '../protocol/signature.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport } from '../contracts/delivery.js';

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
