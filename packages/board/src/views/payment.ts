import type { LedgerEntry } from '@payhook/core';
import { isRefusal } from '@payhook/core/store';

/**
 * What a record says of its payment, read from its kept body: the merchant's order id, the
 * amount with its currency, and the customer (email, else phone: the keys a customer's erasure
 * takes). `why` says, in a few words, why there is nothing to show.
 */
export interface PaymentFacts {
  order?: string;
  amount?: string;
  customer?: string;
  why?: string;
}

type Fields = Record<string, unknown>;
const isFields = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A kept body's JSON object, or why there is none: a refusal's body was never parsed, a hash-only record's is gone. */
export function bodyFields(e: LedgerEntry): { fields: Fields } | { why: string } {
  if (isRefusal(e)) return { why: 'refused: body never parsed' };
  if (e.body === undefined) return { why: 'body not kept' };
  if (e.bodyEncoding === 'base64') return { why: 'body not UTF-8' };
  try {
    const value: unknown = JSON.parse(e.body);
    return isFields(value) ? { fields: value } : { why: 'body not a JSON object' };
  } catch {
    return { why: 'body not JSON' };
  }
}

/**
 * The payment a record names, for the list, a confirmation and the live rows. The service's
 * webhook calls the currency `currency`; a reconciled transaction, `currencyCode`.
 */
export function paymentOf(e: LedgerEntry): PaymentFacts {
  const read = bodyFields(e);
  if ('why' in read) return { why: read.why };
  const b = read.fields;
  const customer = isFields(b.customer) ? b.customer : {};
  const amount = text(b.amount);
  const currency = text(b.currency) ?? text(b.currencyCode);
  const facts: PaymentFacts = {
    order: text(b.merchantReference),
    amount: amount === undefined ? undefined : currency === undefined ? amount : `${amount} ${currency}`,
    customer: text(customer.email) ?? text(customer.phone),
  };
  return (facts.order ?? facts.amount ?? facts.customer) ? facts : { why: 'body names no order' };
}
