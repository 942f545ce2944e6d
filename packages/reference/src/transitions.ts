import { TRANSITIONS, type Action, type PaymentEventName } from '@payhook/core';
import type { Transaction } from './transactions.js';

// The lifecycle table is core's (`@payhook/core` lifecycle); the reference only applies it.
export { isAction, TRANSITIONS, type Action } from '@payhook/core';

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
