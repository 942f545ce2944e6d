/** The service's two environments: each has its own keys, secrets and transactions. */
export type Mode = 'live' | 'sandbox';

/**
 * The payment lifecycle, written once: the statuses, the moves between them and the event each
 * move sends (section 6). Everything else is derived from TRANSITIONS: which status an event
 * implies, which statuses still agree with an event, the events a status has emitted and in what
 * order a reconcile dispatches them. The receiver, the reconciler, the reference service,
 * `@payhook/testing` and the examples all read this module. No zod here: it is part of the
 * smallest import.
 */

/** The events of section 6, in the order a payment's life can emit them. */
export const EVENT_NAMES = [
  'payment.success',
  'payment.failed',
  'payment.cancelled',
  'payment.refunding',
  'payment.refunded',
  'payment.reversed',
] as const;
/** A webhook event's name: one of EVENT_NAMES (`payment.success`, …). */
export type PaymentEventName = (typeof EVENT_NAMES)[number];

/** Every transaction status; `pending` is the status right after initialize. */
export const TRANSACTION_STATUSES = [
  'pending',
  'processing',
  'completed',
  'failed',
  'cancelled',
  'refunding',
  'refunded',
  'reversed',
] as const;
/** A transaction's status: one of TRANSACTION_STATUSES. */
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/** One way a transaction's status moves: from which statuses, to which, and what it sends. */
export interface Transition {
  /** The statuses it moves from. */
  from: readonly TransactionStatus[];
  /** The status it moves to. */
  to: TransactionStatus;
  /** The webhook the move sends, or null for none. */
  event: PaymentEventName | null;
  /** The move's `eventType` on the transaction's timeline (snake_case, as the SDKs show `session_created`, `payment_failed`). */
  step: string;
  /** The move in a few words (`Payment completed`): a failure's message on the timeline when none is given. */
  description: string;
}

/** Every way a transaction's status moves, named by the action that moves it. */
export const TRANSITIONS = {
  open: { from: ['pending'], to: 'processing', event: null, step: 'checkout_opened', description: 'Checkout opened' },
  pay: {
    from: ['pending', 'processing'],
    to: 'completed',
    event: 'payment.success',
    step: 'payment_completed',
    description: 'Payment completed',
  },
  fail: {
    from: ['pending', 'processing'],
    to: 'failed',
    event: 'payment.failed',
    step: 'payment_failed',
    description: 'Payment attempt failed',
  },
  cancel: {
    from: ['pending', 'processing'],
    to: 'cancelled',
    event: 'payment.cancelled',
    step: 'payment_cancelled',
    description: 'Transaction cancelled',
  },
  refund: { from: ['completed'], to: 'refunding', event: 'payment.refunding', step: 'refund_initiated', description: 'Refund initiated' },
  'complete-refund': {
    from: ['refunding'],
    to: 'refunded',
    event: 'payment.refunded',
    step: 'refund_completed',
    description: 'Refund completed',
  },
  reverse: { from: ['completed'], to: 'reversed', event: 'payment.reversed', step: 'payment_reversed', description: 'Payment reversed' },
} as const satisfies Record<string, Transition>;
/** A sandbox action: the name of one of TRANSITIONS (`pay`, `complete-refund`, …). */
export type Action = keyof typeof TRANSITIONS;

/** Whether a name is one of TRANSITIONS' actions. */
export const isAction = (name: string): name is Action => Object.hasOwn(TRANSITIONS, name);

const NAMES: ReadonlySet<unknown> = new Set(EVENT_NAMES);
/** Whether a value is one of EVENT_NAMES. */
export const isPaymentEventName = (name: unknown): name is PaymentEventName => NAMES.has(name);

const moves: readonly Transition[] = Object.values(TRANSITIONS);

/** The status a transaction has right after the service sent `event`. */
export const STATUS_AFTER = Object.fromEntries(EVENT_NAMES.map((name) => [name, moves.find((m) => m.event === name)!.to])) as Record<
  PaymentEventName,
  TransactionStatus
>;

/** Statuses reachable from `status` (itself included), by any number of moves. */
function reachable(status: TransactionStatus): TransactionStatus[] {
  const seen: TransactionStatus[] = [status];
  for (let i = 0; i < seen.length; i++) {
    for (const m of moves) if (m.from.includes(seen[i]!) && !seen.includes(m.to)) seen.push(m.to);
  }
  return seen;
}

/**
 * The statuses a transaction may have once `event` happened: a success stays true of a payment
 * that was refunded or reversed since. The receiver's record check runs handlers only on these.
 */
export const AGREEING_STATUSES = Object.fromEntries(EVENT_NAMES.map((name) => [name, reachable(STATUS_AFTER[name])])) as unknown as Record<
  PaymentEventName,
  readonly TransactionStatus[]
>;

/** The events along the way from `pending` to `status`, oldest first (the lifecycle has one way to each status). */
function eventsTo(status: TransactionStatus): PaymentEventName[] {
  if (status === 'pending') return [];
  const m = moves.find((t) => t.to === status)!;
  const before = m.from.includes('pending') ? [] : eventsTo(m.from[0]!);
  return m.event ? [...before, m.event] : before;
}

/**
 * The events a transaction in this status has emitted, in the order the service emits them:
 * a refunded payment was first a success, then refunding, then refunded. A reconcile dispatches
 * them in this order and stops at the first that does not finish.
 */
export const EVENTS_BY_STATUS = Object.fromEntries(TRANSACTION_STATUSES.map((s) => [s, eventsTo(s)])) as unknown as Record<
  TransactionStatus,
  readonly PaymentEventName[]
>;

/**
 * How far along a status is: the number of moves from `pending` on the longest way there. A
 * delivery that arrives late (a payment after its refund) never moves an order back.
 */
export const STATUS_RANK = Object.fromEntries(TRANSACTION_STATUSES.map((s) => [s, rank(s)])) as Record<TransactionStatus, number>;

function rank(status: TransactionStatus): number {
  let best = 0;
  for (const m of moves) if (m.to === status) for (const f of m.from) best = Math.max(best, rank(f) + 1);
  return best;
}

/**
 * The events that come before `event` in the life of one transaction, oldest first: a refund
 * follows its success and its refunding. The ordering guard (`ordering` option) runs an event's
 * handlers only once these ran.
 */
export const EVENTS_BEFORE = Object.fromEntries(
  EVENT_NAMES.map((name) => [name, EVENTS_BY_STATUS[STATUS_AFTER[name]].filter((e) => e !== name)]),
) as unknown as Record<PaymentEventName, readonly PaymentEventName[]>;

/** Whether a transaction was paid once `event` happened (its `paidAt` is set): every event after a success. */
export const wasPaid = (event: PaymentEventName): boolean => EVENTS_BY_STATUS[STATUS_AFTER[event]].includes('payment.success');

/** The event each status is the result of (`completed` is the result of `payment.success`); none for `pending` and `processing`. */
const EVENT_TO: Partial<Record<string, PaymentEventName>> = Object.fromEntries(EVENT_NAMES.map((name) => [STATUS_AFTER[name], name]));
const EVENT_OF_STEP: Partial<Record<string, PaymentEventName>> = Object.fromEntries(
  moves.filter((m) => m.event).map((m) => [m.step, m.event!]),
);

/**
 * The event a timeline entry records, or undefined: by the status after it where the entry carries
 * one, else by its `eventType` (the move's `step`).
 */
export const eventOfStep = (entry: { eventType: string; status?: string }): PaymentEventName | undefined =>
  (entry.status !== undefined ? EVENT_TO[entry.status] : undefined) ??
  (Object.hasOwn(EVENT_OF_STEP, entry.eventType) ? EVENT_OF_STEP[entry.eventType] : undefined);

/**
 * How the service's record stands to an event it sent: its status `agrees` (the event happened, and
 * perhaps more since), is `behind` (the event moves it further: the API has not caught up with its
 * own webhook yet, so ask again later), or `contradicts` it (no move leads from it to the event).
 */
export function standing(event: PaymentEventName, status: TransactionStatus): 'agrees' | 'behind' | 'contradicts' {
  if (AGREEING_STATUSES[event].includes(status)) return 'agrees';
  return reachable(status).includes(STATUS_AFTER[event]) ? 'behind' : 'contradicts';
}
