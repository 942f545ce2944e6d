import type { DeliveryAttempt } from '../delivery/delivery-record.js';
import type { Delivery } from '../delivery/dispatcher.js';
import type { ServiceContext } from '../contract/context.js';
import type { Transaction } from '../domain/transactions.js';
import { TRANSITIONS, type Action } from '../domain/transitions.js';
import { html, page, type Html } from './html.js';
import { refreshNote, refreshSeconds } from './refresh.js';

/** The moves the dashboard offers, when the transaction's status allows them. */
export const DASHBOARD_ACTIONS = ['fail', 'refund', 'complete-refund', 'reverse', 'cancel'] as const satisfies readonly Action[];
export type DashboardAction = (typeof DASHBOARD_ACTIONS)[number];

const LABELS: Record<DashboardAction, string> = {
  fail: 'Fail',
  refund: 'Refund',
  'complete-refund': 'Complete refund',
  reverse: 'Reverse',
  cancel: 'Cancel',
};

/** How much of a receiver's answer the dashboard shows. */
const SHOWN_BODY = 300;

export const transactionPath = (reference: string) => `/_dashboard/transactions/${encodeURIComponent(reference)}`;

/** The actions allowed from the transaction's status; live transactions are never moved by hand. */
export function allowedActions(tx: Transaction): DashboardAction[] {
  if (tx.mode !== 'sandbox') return [];
  return DASHBOARD_ACTIONS.filter((a) => (TRANSITIONS[a].from as readonly string[]).includes(tx.status));
}

function actions(tx: Transaction): Html {
  const allowed = allowedActions(tx);
  if (tx.mode !== 'sandbox') return html`<p class="hint">Live transaction: moved only by the customer and the API.</p>`;
  if (allowed.length === 0) return html`<p class="hint">No action is allowed from ${tx.status}.</p>`;
  return html`<div id="actions">${allowed.map(
    (a) =>
      html`<form class="inline" method="post" action="${transactionPath(tx.reference)}/${a}"><button type="submit" id="action-${a}">${LABELS[a]}</button></form>`,
  )}</div>`;
}

function responseBody(a: DeliveryAttempt): Html | string {
  if (a.responseBody === undefined || a.responseBody === null) return '';
  const text = a.responseBody.length > SHOWN_BODY ? `${a.responseBody.slice(0, SHOWN_BODY)}… (truncated)` : a.responseBody;
  return html`<pre class="response">${text}</pre>`;
}

function delivery(d: Delivery): Html {
  const attempts = d.attempts.map(
    (a) =>
      html`<tr class="attempt"><td>${a.number}</td><td>${a.at}</td><td class="response-status">${a.status ?? '—'}</td><td class="latency">${a.durationMs}</td><td class="response-body">${responseBody(a)}</td><td>${a.error ?? ''}</td></tr>`,
  );
  return html`<section class="delivery" id="${d.id}"><h3><code>${d.id}</code> ${d.event} → <code>${d.url ?? 'no callback URL'}</code>: <span class="state">${d.state}</span></h3>
<div><form class="inline" method="post" action="/_dashboard/deliveries/${encodeURIComponent(d.id)}/resend"><button type="submit" class="resend">Resend</button></form></div>
${d.error ? html`<p>${d.error}</p>` : ''}${d.duplicateOf ? html`<p>Duplicate of ${d.duplicateOf}</p>` : ''}${d.resendOf ? html`<p class="resend-of">Resend of ${d.resendOf}</p>` : ''}${d.nextAttemptAt ? html`<p>Next attempt at ${d.nextAttemptAt}</p>` : ''}
<table><thead><tr><th>Attempt</th><th>At</th><th>Status</th><th>Latency (ms)</th><th>Response body</th><th>Error</th></tr></thead>
<tbody>${attempts}</tbody></table></section>`;
}

/**
 * The page of one transaction: its details, the moves allowed now, its timeline and every delivery
 * with its attempts. While a delivery is under way it reloads itself, so attempts show as they come.
 */
export function detailPage(ctx: ServiceContext, tx: Transaction): Response {
  const timeline = tx.timeline.map(
    (e) =>
      html`<tr><td>${e.occurredAt}</td><td>${e.eventType}</td><td>${e.status}</td><td>${e.errorCode ?? ''}</td><td>${e.errorMessage ?? ''}</td></tr>`,
  );
  const listed = ctx.dispatcher.list({ reference: tx.reference });
  const deliveries = listed.map(delivery);
  const refresh = refreshSeconds(listed, ctx.clock.now());
  const body = html`<p><a href="/_dashboard">← all transactions</a></p>
<h1>${tx.reference}</h1>
<p>${tx.merchantId} · ${tx.mode} · order <code>${tx.merchantReference}</code> · ${tx.amount} ${tx.currency} (fee ${tx.serviceFee}) · phone ${tx.customer.phone}</p>
<p>Status: <span class="status" id="status">${tx.status}</span>${tx.paymentMethod ? ` · paid with ${tx.paymentMethod}` : ''}</p>
${actions(tx)}
<h2>Timeline</h2><table id="timeline"><thead><tr><th>At</th><th>Event</th><th>Status</th><th>Error code</th><th>Error message</th></tr></thead><tbody>${timeline}</tbody></table>
<h2>Deliveries</h2>${refreshNote(refresh)}${deliveries.length ? deliveries : html`<p>No deliveries.</p>`}`;
  return page(`payhook reference: ${tx.reference}`, body, 200, refresh);
}
