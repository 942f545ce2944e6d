import type { PaymentEventName, TransactionStatus } from '@payhook/core';
import type { Transaction } from './transactions.js';

/** Every way a transaction's status moves, with the event each move sends (section 6). */
export const TRANSITIONS = {
  open: { from: ['pending'], to: 'processing', event: null, description: 'Checkout opened' },
  pay: { from: ['pending', 'processing'], to: 'completed', event: 'payment.success', description: 'Payment completed' },
  fail: { from: ['pending', 'processing'], to: 'failed', event: 'payment.failed', description: 'Payment attempt failed' },
  cancel: { from: ['pending', 'processing'], to: 'cancelled', event: 'payment.cancelled', description: 'Transaction cancelled' },
  refund: { from: ['completed'], to: 'refunding', event: 'payment.refunding', description: 'Refund initiated' },
  'complete-refund': { from: ['refunding'], to: 'refunded', event: 'payment.refunded', description: 'Refund completed' },
  reverse: { from: ['completed'], to: 'reversed', event: 'payment.reversed', description: 'Payment reversed' },
} as const satisfies Record<
  string,
  { from: readonly TransactionStatus[]; to: TransactionStatus; event: PaymentEventName | null; description: string }
>;

export type Action = keyof typeof TRANSITIONS;

export const isAction = (name: string): name is Action => Object.hasOwn(TRANSITIONS, name);

/**
 * Move `tx` by `action` at time `now`: status, `paidAt`, `updatedAt` and the timeline. Returns the
 * event to send (null for none), or the 400 message when the move is not allowed from the
 * current status.
 *
 * @example
 * const moved = applyTransition(tx, 'pay', clock.now());
 * if (!moved.ok) throw new ApiError(400, moved.message);
 */
export function applyTransition(
  tx: Transaction,
  action: Action,
  now: number,
  details: { note?: string; paymentMethod?: string } = {},
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
  tx.timeline.push({
    at: new Date(now).toISOString(),
    status: t.to,
    event: t.event,
    description: details.note ? `${t.description} (${details.note})` : t.description,
  });
  return { ok: true, event: t.event };
}
