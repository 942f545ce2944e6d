// A webhook delivery as the service records it, with every attempt, and the filter that lists them.
import type { PaymentEventName } from '@payhook/core';
import type { Mode } from '../domain/merchants.js';

/** One attempt to deliver a webhook, as the service records it. */
export interface DeliveryAttempt {
  /** 1 to 5. */
  number: number;
  /** When the attempt started (ISO 8601, the service's clock). */
  at: string;
  /** HTTP status answered, or null when none came (timeout, connection error, injected failure). */
  status: number | null;
  /** How long the attempt took, in ms of the service's clock. */
  durationMs: number;
  /** Why the attempt failed; null when it succeeded. */
  error: string | null;
  /** The start of the receiver's answer (at most RESPONSE_BODY_LIMIT bytes, as UTF-8), or null when none came. */
  responseBody?: string | null;
}

/** How much of a receiver's answer an attempt keeps. */
export const RESPONSE_BODY_LIMIT = 2048;

/**
 * - `pending`: the first attempt is running or waiting (a `delay` fault);
 * - `retrying`: an attempt failed and the next one is scheduled at `nextAttemptAt`;
 * - `delivered`: an attempt got a 2xx;
 * - `failed`: permanently failed after the 5th attempt, or never sendable (see `error`);
 * - `dropped`, `held`: sandbox faults.
 */
export type DeliveryState = 'pending' | 'retrying' | 'delivered' | 'failed' | 'dropped' | 'held';

/** A webhook delivery: one event of one transaction to the merchant's callback URL, with every attempt. */
export interface Delivery {
  /** `dlv_1`, `dlv_2`, … */
  id: string;
  /** The merchant it is sent to. */
  merchantId: string;
  /** `sandbox` or `live`, as the transaction's. */
  mode: Mode;
  /** The transaction's reference. */
  reference: string;
  /** The event sent: `payment.success`, …. */
  event: PaymentEventName;
  /** The callback URL it goes to; null when the transaction has none. */
  url: string | null;
  /** Where it stands (`DeliveryState`). */
  state: DeliveryState;
  /** Every attempt so far, oldest first. */
  attempts: DeliveryAttempt[];
  /** When the next attempt is due (ISO 8601), while one is scheduled; else null. */
  nextAttemptAt: string | null;
  /** When the delivery was made (ISO 8601, the service's clock). */
  createdAt: string;
  /** Set on the extra copies a `duplicate` fault makes. */
  duplicateOf: string | null;
  /** Set on a delivery made by resending another (dashboard, `POST /_sandbox/deliveries/:id/resend`). */
  resendOf?: string | null;
  /** Why the delivery was never attempted (no callback URL, refused URL), else null. */
  error: string | null;
  /** The exact bytes sent, and their signature header's value. */
  body: string;
  /** The signature header's value. */
  signature: string;
  /** The header the signature is sent in, lower case (absent in state files saved before it was recorded). */
  signatureHeader?: string;
}

/** What `deliveries()` lists by; every field given must match. */
export interface DeliveryFilter {
  /** One merchant's. */
  merchantId?: string;
  /** One mode's. */
  mode?: Mode;
  /** One transaction's. */
  reference?: string;
}
