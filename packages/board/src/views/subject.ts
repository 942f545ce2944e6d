import type { LedgerEntry } from '@payhook/core';
import { html, type Html } from '@payhook/core/api';
import { at, type View } from './page.js';
import { outcomeOf } from './outcome.js';
import { paymentOf, type PaymentFacts } from './payment.js';

/** Records of a payment read to find one whose kept body names its order: the newest first. */
const LOOK = 100;

/** ", order <id>, 150.00 ETB": what a kept body says of the payment, for a confirmation's question. */
const orderAndAmount = (p: PaymentFacts): Html | string =>
  p.why !== undefined
    ? ''
    : html`${p.order === undefined ? '' : html`, order <code class="value">${p.order}</code>`}${p.amount === undefined ? '' : html`, ${p.amount}`}`;

/**
 * How a confirmation names one delivery's payment: its reference, order id and amount (from the
 * kept body), then the delivery itself as a fact below; a record with no reference by its id.
 */
export function deliverySubject(e: LedgerEntry): { target: Html; facts: Html } {
  const p = paymentOf(e);
  const target =
    e.reference === undefined
      ? html`delivery <code class="value">${e.id}</code>${orderAndAmount(p)}`
      : html`payment <code class="value">${e.reference}</code>${orderAndAmount(p)}`;
  const facts = html`<dl class="facts" id="subject"><dt>Delivery</dt><dd><code class="value">${e.id}</code>, received ${at(e.receivedAt)}</dd>${p.customer === undefined ? '' : html`<dt>Customer</dt><dd class="value">${p.customer}</dd>`}<dt>Outcome</dt><dd>${outcomeOf(e)} (${e.status})</dd>${p.why === undefined ? '' : html`<dt>Order</dt><dd>${p.why}</dd>`}</dl>`;
  return { target, facts };
}

/**
 * How a payment's erasure is named: its reference, and the order id and amount of its newest
 * record whose body was kept (through the viewer's ledger, in the account acted on); `reach`, the
 * accounts it reaches (actions.ts).
 */
export async function paymentSubject(view: View, reference: string, account: string | undefined, reach: Html | string): Promise<Html> {
  const records = await view.ledger.list({ reference, account, limit: LOOK });
  const named = records.filter((e) => e.reference === reference && (account === undefined || e.account === account));
  const facts = named.map(paymentOf).find((p) => p.why === undefined) ?? { why: 'none kept' };
  return html`payment <code class="value">${reference}</code>${reach}${orderAndAmount(facts)}`;
}
