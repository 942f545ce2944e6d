import { randomBytes } from 'node:crypto';
import type { PaymentEvent, PaymentEventName, TransactionRecord, TransactionStatus } from '@payhook/core';
import type { Mode } from './merchants.js';

/** One step of a transaction's life, as the timeline endpoint sends it (go-sdk types.go `TimelineEvent`). */
export interface TimelineEntry {
  /** `session_created`, `checkout_opened`, `payment_completed`, `payment_failed`, … */
  eventType: string;
  occurredAt: string;
  /** Set on failures (`PAYMENT_FAILED`, `INVALID_OTP`, …), else null. */
  errorCode: string | null;
  errorMessage: string | null;
  /** The status after the step. */
  status: TransactionStatus;
}

/** How long a checkout session lasts after initialize. */
export const CHECKOUT_SESSION_MS = 60 * 60 * 1000;

/** A transaction as the service keeps it. */
export interface Transaction {
  /** Creation order, for stable list pages. */
  seq: number;
  reference: string;
  merchantId: string;
  mode: Mode;
  merchantReference: string;
  amount: string;
  serviceFee: string;
  currency: string;
  status: TransactionStatus;
  /** Null until the customer pays or fails at checkout (or sandbox control says how). */
  paymentMethod: string | null;
  customer: { name: string; email: string; phone: string };
  callbackUrl: string | undefined;
  /** Where checkout sends the customer back to, if the merchant gave one. */
  returnUrl: string | undefined;
  checkoutUrl: string;
  createdAt: number;
  updatedAt: number;
  /** When the checkout session ends: createdAt + CHECKOUT_SESSION_MS. */
  expiresAt: number;
  paidAt: number | null;
  timeline: TimelineEntry[];
}

/** What `create` needs; the store sets the rest. */
export type NewTransaction = Omit<
  Transaction,
  'seq' | 'reference' | 'status' | 'paymentMethod' | 'returnUrl' | 'checkoutUrl' | 'updatedAt' | 'expiresAt' | 'paidAt' | 'timeline'
> & { returnUrl?: string };

export interface ListFilter {
  merchantId: string;
  mode: Mode;
  from?: Date;
  to?: Date;
  currency?: string;
  status?: TransactionStatus;
  /** Only transactions created before this `seq` (the cursor's position). */
  before?: number;
  limit: number;
}

export interface TransactionStore {
  create(input: NewTransaction, checkoutUrl: (reference: string) => string): Transaction;
  /** The transaction with `reference` under this merchant and mode, if any. */
  get(merchantId: string, mode: Mode, reference: string): Transaction | undefined;
  /** Any transaction by reference (checkout page, dashboard). */
  find(reference: string): Transaction | undefined;
  /** Newest first; `more` tells whether another page follows. */
  list(filter: ListFilter): { items: Transaction[]; more: boolean };
  all(): Transaction[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A reference in the service's format: `P`, 8 upper-case hex digits, then the creation date
 * `yyyymmdd` (UTC, service clock), as go-sdk types.go `InitializedPayment` documents it.
 *
 * @example
 * newReference(Date.parse('2026-08-13T10:00:00Z')); // 'PAB12CD3420260813'
 */
export function newReference(createdAt: number): string {
  return `P${randomBytes(4).toString('hex').toUpperCase()}${iso(createdAt).slice(0, 10).replaceAll('-', '')}`;
}

/**
 * The transactions of every merchant, in memory.
 *
 * @example
 * const tx = store.create(input, (ref) => `${origin}/checkout/${ref}`);
 */
export function createTransactionStore(saved: readonly Transaction[] = []): TransactionStore {
  // Transactions saved earlier (`serve --state`) keep their numbers; new ones follow them, so list pages stay in creation order across a restart.
  const byReference = new Map<string, Transaction>(saved.map((tx) => [tx.reference, tx]));
  let seq = saved.reduce((max, tx) => Math.max(max, tx.seq), 0);
  return {
    create(input, checkoutUrl) {
      let reference = newReference(input.createdAt);
      // 2^32 per day: a collision is rare, but a second transaction must never replace the first.
      while (byReference.has(reference)) reference = newReference(input.createdAt);
      const tx: Transaction = {
        ...input,
        returnUrl: input.returnUrl,
        seq: ++seq,
        reference,
        status: 'pending',
        paymentMethod: null,
        checkoutUrl: checkoutUrl(reference),
        updatedAt: input.createdAt,
        expiresAt: input.createdAt + CHECKOUT_SESSION_MS,
        paidAt: null,
        timeline: [
          { eventType: 'session_created', occurredAt: iso(input.createdAt), errorCode: null, errorMessage: null, status: 'pending' },
        ],
      };
      byReference.set(reference, tx);
      return tx;
    },
    get(merchantId, mode, reference) {
      const tx = byReference.get(reference);
      return tx && tx.merchantId === merchantId && tx.mode === mode ? tx : undefined;
    },
    find: (reference) => byReference.get(reference),
    list(filter) {
      const matches = [...byReference.values()]
        .filter(
          (tx) =>
            tx.merchantId === filter.merchantId &&
            tx.mode === filter.mode &&
            (filter.before === undefined || tx.seq < filter.before) &&
            (!filter.from || tx.createdAt >= filter.from.getTime()) &&
            (!filter.to || tx.createdAt <= filter.to.getTime()) &&
            (!filter.currency || tx.currency === filter.currency) &&
            (!filter.status || tx.status === filter.status),
        )
        .sort((a, b) => b.seq - a.seq);
      return { items: matches.slice(0, filter.limit), more: matches.length > filter.limit };
    },
    all: () => [...byReference.values()].sort((a, b) => b.seq - a.seq),
  };
}

/**
 * The record that verify, retrieve and list return, in the SDKs' shape (go-sdk types.go
 * `VerifiedPayment`, `Transaction`): `currencyCode`, `paymentMethod` null until known, plus
 * `mode`, `checkoutUrl`, `updatedAt` and `expiresAt`.
 */
export function toRecord(tx: Transaction): TransactionRecord {
  return {
    reference: tx.reference,
    merchantReference: tx.merchantReference,
    status: tx.status,
    amount: tx.amount,
    serviceFee: tx.serviceFee,
    currencyCode: tx.currency,
    paymentMethod: tx.paymentMethod,
    customer: { ...tx.customer },
    paidAt: tx.paidAt === null ? null : iso(tx.paidAt),
    createdAt: iso(tx.createdAt),
    mode: tx.mode,
    checkoutUrl: tx.checkoutUrl,
    updatedAt: iso(tx.updatedAt),
    expiresAt: iso(tx.expiresAt),
  };
}

/**
 * The webhook payload of 2.1: `currency` (not `currencyCode`), and `paymentMethod` null while
 * unknown (go-sdk types.go `WebhookEvent` models it as nullable). `paidAt` only on
 * `payment.success`: null on every other event, refunds and reversals included, as go-sdk
 * types.go `WebhookEvent` says ("PaidAt is nil for every non-success event"); the record keeps it.
 */
export function toPayload<E extends PaymentEventName>(tx: Transaction, event: E): PaymentEvent<E> {
  return {
    event,
    mode: tx.mode,
    reference: tx.reference,
    merchantReference: tx.merchantReference,
    amount: tx.amount,
    serviceFee: tx.serviceFee,
    currency: tx.currency,
    status: tx.status,
    paymentMethod: tx.paymentMethod,
    customer: { ...tx.customer },
    paidAt: event === 'payment.success' && tx.paidAt !== null ? iso(tx.paidAt) : null,
    createdAt: iso(tx.createdAt),
  } as PaymentEvent<E>;
}
