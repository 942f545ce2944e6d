import type { LedgerEntry } from '@payhook/core';
import { html, type Html } from '@payhook/core/api';
import { at, link, type View } from './page.js';
import { eventLabel, outcomeOf } from './outcome.js';
import { paymentOf } from './payment.js';
import { deadTone, resolvedNote } from './resolved.js';

/**
 * The list's columns, in order; the Account column only in the platform view. Each cell carries
 * its column's name (`data-label`), which a phone's narrow screen shows beside the value when
 * the rows stack (assets.ts); the page's script builds live rows in the same order (assets.ts).
 */
export const COLUMNS = [
  'Received',
  'Account',
  'Reference',
  'Order',
  'Amount',
  'Event',
  'Outcome',
  'Status',
  'Attempt',
  'Signature',
  'Took',
];

const none = html`<span class="muted">none</span>`;

/** The Order cell (the order id, the customer under it) and the Amount cell, from a kept body; or why the body says nothing. */
function paymentCells(e: LedgerEntry): Html {
  const p = paymentOf(e);
  if (p.why !== undefined)
    return html`<td class="order" data-label="Order"><span class="muted">${p.why}</span></td><td class="num" data-label="Amount"></td>`;
  const customer = p.customer === undefined ? '' : html`<span class="customer muted">${p.customer}</span>`;
  return html`<td class="order" data-label="Order">${p.order === undefined ? none : html`<span class="value">${p.order}</span>`}${customer}</td><td class="num" data-label="Amount">${p.amount ?? ''}</td>`;
}

/** One record's row; `resolvedBy`, the later attempt that settled its failure (views/resolved.ts). */
function row(view: View, e: LedgerEntry, resolvedBy: LedgerEntry | undefined): Html {
  const account = view.platform ? html`<td class="account" data-label="Account">${e.account ?? none}</td>` : '';
  const dead = e.deadLetter
    ? html` <span class="outcome ${deadTone(e)}">${e.deadLetter.retriedBy ? 'dead letter, retried' : 'dead letter'}</span>`
    : '';
  const outcome = outcomeOf(e, resolvedBy && resolvedNote(view, resolvedBy));
  return html`<tr data-id="${e.id}"><td data-label="Received"><a href="${link(view, `/deliveries/${encodeURIComponent(e.id)}`)}">${at(e.receivedAt)}</a></td>${account}<td class="value" data-label="Reference">${e.reference ?? none}</td>${paymentCells(e)}<td data-label="Event">${eventLabel(e)}</td><td data-label="Outcome">${outcome}${dead}</td><td class="num" data-label="Status">${e.status}</td><td class="num" data-label="Attempt">${e.attempt ?? ''}</td><td data-label="Signature">${e.signature}</td><td class="num" data-label="Took">${Math.round(e.durationMs)} ms</td></tr>`;
}

/** The deliveries table: its live stream's address when the page is live, a row per record. */
export function table(view: View, rows: LedgerEntry[], live: string | undefined, resolved: ReadonlyMap<string, LedgerEntry>): Html {
  const columns = COLUMNS.filter((c) => c !== 'Account' || view.platform);
  return html`<div class="rows"><table id="deliveries"${live ? html` data-live="${live}"` : ''}${view.platform ? html` data-accounts` : ''}${rows.length === 0 ? html` hidden` : ''}><caption class="visually-hidden">Deliveries, newest first</caption>
<thead><tr>${columns.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
<tbody>${rows.map((e) => row(view, e, resolved.get(e.id)))}</tbody></table></div>`;
}
