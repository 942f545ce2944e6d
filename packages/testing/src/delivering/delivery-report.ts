// What `deliver` reports: every attempt of every delivery, and the deliveries themselves.

/** One attempt of one delivery. */
export interface DeliveryAttemptReport {
  /** Index into `DeliverResult.deliveries`. */
  delivery: number;
  /** The event name and reference read from the body ('' when the body is not an event). */
  event: string;
  /** The transaction's reference read from the body ('' when the body is not an event). */
  reference: string;
  /** Which copy of the event this delivery is: 1 to `duplicates`. */
  copy: number;
  /** 1 to the schedule's last attempt (5 by default). */
  number: number;
  /** Virtual milliseconds since the first attempt: 0, 60000, 180000, 420000, 900000 for the service's schedule. */
  at: number;
  /** The HTTP status, or null when no answer came (timeout, connection error). */
  status: number | null;
  /** payhook's answer body `{"outcome": …}` (processed, duplicate, in-progress, accepted…), or null for another body. */
  outcome: string | null;
  /** Why the attempt failed (non-2xx, timeout, connection error); null on a 2xx. */
  error: string | null;
  /** Real milliseconds the attempt took. */
  durationMs: number;
}

/** One delivery (one copy of one event) and all its attempts. */
export interface DeliveryRun {
  /** Its index in `DeliverResult.deliveries`. */
  index: number;
  /** The event name read from the body ('' when the body is not an event). */
  event: string;
  /** The reference read from the body ('' when the body is not an event). */
  reference: string;
  /** Which copy of the event it is: 1 to `duplicates`. */
  copy: number;
  /** The exact bytes sent and their signature. */
  body: string | Uint8Array;
  /** The signature header's value. */
  signature: string;
  /** The header the signature was sent in, lower case (`x-service-signature` unless `signatureHeader` said otherwise). */
  signatureHeader: string;
  /** `delivered` once an attempt got a 2xx; `failed` when the schedule ran out. */
  state: 'delivered' | 'failed';
  /** Its attempts, in order. */
  attempts: DeliveryAttemptReport[];
}

/** What `deliver` reports: every attempt and every delivery, and whether all were delivered. */
export interface DeliverResult {
  /** Every attempt, in the order they were made. */
  attempts: DeliveryAttemptReport[];
  /** Every delivery, in the order each was first sent (after `reorder`). */
  deliveries: DeliveryRun[];
  /** The status of every attempt, in order (`attempts.map(a => a.status)`). */
  statuses: (number | null)[];
  /** True when every delivery got a 2xx. */
  delivered: boolean;
}
