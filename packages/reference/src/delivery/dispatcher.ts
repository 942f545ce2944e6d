import { sign, type PaymentEventName } from '@payhook/core';
import { paymentEventSchema } from '@payhook/core/lifecycle';
import type { Merchant } from '../domain/merchants.js';
import { toPayload, type Transaction } from '../domain/transactions.js';
import { attempt, start } from './dispatch-attempt.js';
import { createDispatchState, type DispatchState, type DispatcherOptions, record } from './dispatch-state.js';
import type { Delivery, DeliveryFilter } from './delivery-record.js';

// What the dispatcher records; test/security imports it from here.
export type { Delivery } from './delivery-record.js';
export type { DispatcherOptions } from './dispatch-state.js';

export interface Dispatcher {
  /** Send `event` for `tx` to its callback URL: record the delivery and start its first attempt. */
  send(merchant: Merchant, tx: Transaction, event: PaymentEventName): Delivery[];
  /** Deliveries, oldest first. */
  list(filter?: DeliveryFilter): Delivery[];
  /** Deliver the same bytes again, as a new delivery (`resendOf` names the first); undefined for an unknown id. */
  resend(id: string): Delivery | undefined;
  /** Take back deliveries saved earlier (a state file): retries that were due are scheduled again. */
  restore(saved: Delivery[]): void;
}

/**
 * The webhook dispatcher: signs exactly the bytes it sends, times out after 10 s of the service's
 * clock, retries after 1, 2, 4 and 8 minutes, and marks the delivery permanently failed after the
 * 5th attempt. Redirects are not followed. Every attempt is recorded. The steps of a delivery are
 * functions over one DispatchState (dispatch-state.ts, dispatch-attempt.ts).
 *
 * @example
 * const dispatcher = createDispatcher({ clock, faults, allowHttpCallbacks: false });
 * dispatcher.send(merchant, tx, 'payment.success');
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const state = createDispatchState(options);
  return {
    send: (merchant, tx, event) => send(state, merchant, tx, event),
    resend: (id) => resend(state, id),
    restore: (saved) => restore(state, saved),
    list: (filter = {}) => list(state, filter),
  };
}

/** Record the event's delivery (and the copies a `duplicate` fault asks for), then start them. */
function send(state: DispatchState, merchant: Merchant, tx: Transaction, event: PaymentEventName): Delivery[] {
  const payload = toPayload(tx, event);
  // A payload that fails the schema is a bug in the service, never something to send.
  paymentEventSchema.parse(payload);
  const body = JSON.stringify(payload);
  const from = {
    merchantId: merchant.id,
    mode: tx.mode,
    reference: tx.reference,
    event,
    url: tx.callbackUrl ?? merchant.callbackUrl ?? null,
    body,
    signature: sign(body, merchant.webhookSecret),
  };
  const first = record(state, from);
  const sent = [first];
  const duplicate = first.state === 'failed' ? undefined : state.options.faults.take(first, ['duplicate']);
  for (let i = 0; i < (duplicate?.times ?? 0); i++) sent.push(record(state, from, { duplicateOf: first.id }));
  start(state, first);
  // Copies skip the other faults: one rule, one effect.
  for (const copy of sent.slice(1)) attempt(state, copy);
  return sent;
}

function resend(state: DispatchState, id: string): Delivery | undefined {
  const original = state.deliveries.find((d) => d.id === id);
  if (!original) return undefined;
  const copy = record(state, original, { resendOf: original.id });
  start(state, copy);
  return copy;
}

function restore(state: DispatchState, saved: Delivery[]): void {
  const { clock } = state.options;
  for (const d of saved) {
    state.deliveries.push(d);
    state.lastId = Math.max(state.lastId, Number(/^dlv_(\d+)$/.exec(d.id)?.[1] ?? 0));
  }
  for (const d of saved) {
    // An attempt cut short by the restart is lost: it runs again, as the next attempt.
    const due = d.nextAttemptAt === null ? clock.now() : Math.max(clock.now(), Date.parse(d.nextAttemptAt));
    if (d.state === 'retrying' || d.state === 'pending') clock.at(due, () => attempt(state, d));
  }
}

function list(state: DispatchState, filter: DeliveryFilter): Delivery[] {
  return state.deliveries.filter(
    (d) =>
      (filter.merchantId === undefined || d.merchantId === filter.merchantId) &&
      (filter.mode === undefined || d.mode === filter.mode) &&
      (filter.reference === undefined || d.reference === filter.reference),
  );
}
