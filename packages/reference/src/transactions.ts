import { randomBytes } from 'node:crypto';
import type { PaymentEvent, PaymentEventName, TransactionRecord, TransactionStatus } from '@payhook/core';
import type { TimelineEntry } from '@payhook/core/api';
import type { Mode } from './merchants.js';

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
  /** Empty until the customer picks a method at checkout. */
  paymentMethod: string;
  customer: { name: string; email: string; phone: string };
  callbackUrl: string | undefined;
  checkoutUrl: string;
  createdAt: number;
  updatedAt: number;
  paidAt: number | null;
  timeline: TimelineEntry[];
}

export type NewTransaction = Omit<Transaction, 'seq' | 'reference' | 'status' | 'paymentMethod' | 'checkoutUrl' | 'updatedAt' | 'paidAt' | 'timeline'>;

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
 * The transactions of every merchant, in memory.
 *
 * @example
 * const tx = store.create(input, (ref) => `${origin}/checkout/${ref}`);
 */
export function createTransactionStore(): TransactionStore {
  const byReference = new Map<string, Transaction>();
  let seq = 0;
  return {
    create(input, checkoutUrl) {
      const reference = `ref_${randomBytes(12).toString('base64url')}`;
      const tx: Transaction = {
        ...input,
        seq: ++seq,
        reference,
        status: 'pending',
        paymentMethod: '',
        checkoutUrl: checkoutUrl(reference),
        updatedAt: input.createdAt,
        paidAt: null,
        timeline: [{ at: iso(input.createdAt), status: 'pending', event: null, description: 'Transaction initialized' }],
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

/** The fields of 2.1 that every webhook payload and every API record share. */
function payloadFields(tx: Transaction) {
  return {
    mode: tx.mode,
    reference: tx.reference,
    merchantReference: tx.merchantReference,
    amount: tx.amount,
    serviceFee: tx.serviceFee,
    currency: tx.currency,
    status: tx.status,
    paymentMethod: tx.paymentMethod,
    customer: { ...tx.customer },
    paidAt: tx.paidAt === null ? null : iso(tx.paidAt),
    createdAt: iso(tx.createdAt),
  };
}

/** The record that verify, cancel, retrieve and list return: the payload without `event`, plus two fields. */
export function toRecord(tx: Transaction): TransactionRecord {
  return { ...payloadFields(tx), checkoutUrl: tx.checkoutUrl, updatedAt: iso(tx.updatedAt) };
}

/** The webhook payload of 2.1. */
export function toPayload<E extends PaymentEventName>(tx: Transaction, event: E): PaymentEvent<E> {
  return { event, ...payloadFields(tx) } as PaymentEvent<E>;
}

/** Payment methods offered at checkout. */
export const PAYMENT_METHODS = ['telebirr', 'cbebirr', 'mpesa', 'card'] as const;
