import type { PaymentEventName } from '@payhook/core';
import { TRANSITIONS, type Action } from '@payhook/core/lifecycle';
import type { Transaction } from './transactions.js';

// The lifecycle table is core's (`@payhook/core` lifecycle); the reference only applies it.
export { isAction, TRANSITIONS, type Action } from '@payhook/core/lifecycle';

/** What a move may carry besides the action. */
export interface TransitionDetails {
  /** The payment method used, kept on `pay` and `fail`. */
  paymentMethod?: string;
  /** Why the step happened, recorded on the timeline entry (`INVALID_OTP`, `OTP_EXPIRED`, `PAYMENT_DECLINED`, …). */
  errorCode?: string;
  errorMessage?: string;
  /** Who moved it (`sandbox control`, `at checkout`): goes into a failure's default errorMessage. */
  note?: string;
}

/** A `fail` without an error code gets this one. */
export const DEFAULT_FAILURE_CODE = 'PAYMENT_FAILED';

const DEFAULT_MESSAGES: Record<string, string> = {
  PAYMENT_FAILED: 'The payment attempt failed',
  INVALID_OTP: 'The one-time password was wrong',
  OTP_EXPIRED: 'The one-time password expired',
  PAYMENT_DECLINED: 'The provider declined the payment',
};

/**
 * Move `tx` by `action` at time `now`: status, `paymentMethod`, `paidAt`, `updatedAt` and a
 * timeline entry. Returns the event to send (null for none), or the 400 message when the move is
 * not allowed from the current status. A `fail` always carries an error code (default
 * `PAYMENT_FAILED`) and a message.
 *
 * @example
 * const moved = applyTransition(tx, 'fail', clock.now(), { errorCode: 'INVALID_OTP' });
 * if (!moved.ok) throw new ApiError(400, moved.message);
 */
export function applyTransition(
  tx: Transaction,
  action: Action,
  now: number,
  details: TransitionDetails = {},
): { ok: true; event: PaymentEventName | null } | { ok: false; message: string } {
  const t = TRANSITIONS[action];
  if (!(t.from as readonly string[]).includes(tx.status)) {
    return {
      ok: false,
      message: `Cannot ${action} transaction ${tx.reference}: its status is ${tx.status}, and ${action} is allowed only from ${t.from.join(' or ')}.`,
    };
  }
  tx.status = t.to;
  if (details.paymentMethod && (action === 'pay' || action === 'fail')) tx.paymentMethod = details.paymentMethod;
  tx.updatedAt = now;
  if (t.to === 'completed') tx.paidAt = now;
  const errorCode = details.errorCode ?? (action === 'fail' ? DEFAULT_FAILURE_CODE : null);
  let errorMessage = details.errorMessage ?? null;
  if (errorCode !== null && errorMessage === null) {
    const text = DEFAULT_MESSAGES[errorCode] ?? t.description;
    errorMessage = details.note ? `${text} (${details.note})` : text;
  }
  tx.timeline.push({ eventType: t.step, occurredAt: new Date(now).toISOString(), errorCode, errorMessage, status: t.to });
  return { ok: true, event: t.event };
}
