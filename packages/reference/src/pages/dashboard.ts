import { ApiError } from '../http.js';
import type { Route, RouteRequest } from '../router.js';
import { html, page } from './html.js';

const link = (reference: string) => `/_dashboard/transactions/${encodeURIComponent(reference)}`;

function overview({ ctx }: RouteRequest): Response {
  const rows = ctx.transactions.all().map((tx) => {
    const deliveries = ctx.dispatcher.list({ reference: tx.reference });
    return html`<tr>
<td><a href="${link(tx.reference)}">${tx.reference}</a></td><td>${tx.merchantId}</td><td>${tx.mode}</td>
<td>${tx.merchantReference}</td><td>${tx.amount} ${tx.currency}</td><td class="status">${tx.status}</td>
<td>${new Date(tx.createdAt).toISOString()}</td><td>${deliveries.map((d) => `${d.event}: ${d.state}`).join(', ')}</td></tr>`;
  });
  const body = html`<h1>Transactions</h1><p>Service clock: <code id="clock">${new Date(ctx.clock.now()).toISOString()}</code></p>
<table id="transactions"><thead><tr><th>Reference</th><th>Merchant</th><th>Mode</th><th>Merchant reference</th><th>Amount</th><th>Status</th><th>Created</th><th>Deliveries</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="8">No transactions yet.</td></tr>`}</tbody></table>`;
  return page('payhook reference: dashboard', body);
}

function detail({ ctx, params }: RouteRequest): Response {
  const tx = ctx.transactions.find(params.reference!);
  if (!tx) throw new ApiError(404, `No transaction ${params.reference}: pick one from /_dashboard.`);
  const timeline = tx.timeline.map(
    (e) => html`<tr><td>${e.at}</td><td>${e.status}</td><td>${e.event ?? ''}</td><td>${e.description}</td></tr>`,
  );
  const deliveries = ctx.dispatcher.list({ reference: tx.reference }).map(
    (d) => html`<section class="delivery" id="${d.id}"><h3>${d.event} → <code>${d.url ?? 'no callback URL'}</code>: <span class="state">${d.state}</span></h3>
${d.error ? html`<p>${d.error}</p>` : ''}${d.duplicateOf ? html`<p>Duplicate of ${d.duplicateOf}</p>` : ''}${d.nextAttemptAt ? html`<p>Next attempt at ${d.nextAttemptAt}</p>` : ''}
<table><thead><tr><th>Attempt</th><th>At</th><th>Status</th><th>Duration (ms)</th><th>Error</th></tr></thead>
<tbody>${d.attempts.map((a) => html`<tr class="attempt"><td>${a.number}</td><td>${a.at}</td><td>${a.status ?? '—'}</td><td>${a.durationMs}</td><td>${a.error ?? ''}</td></tr>`)}</tbody></table></section>`,
  );
  const body = html`<p><a href="/_dashboard">← all transactions</a></p>
<h1>${tx.reference}</h1>
<p>${tx.merchantId} · ${tx.mode} · order <code>${tx.merchantReference}</code> · ${tx.amount} ${tx.currency} (fee ${tx.serviceFee}) · phone ${tx.customer.phone}</p>
<p>Status: <span class="status" id="status">${tx.status}</span>${tx.paymentMethod ? ` · paid with ${tx.paymentMethod}` : ''}</p>
<h2>Timeline</h2><table id="timeline"><thead><tr><th>At</th><th>Status</th><th>Event</th><th>What</th></tr></thead><tbody>${timeline}</tbody></table>
<h2>Deliveries</h2>${deliveries.length ? deliveries : html`<p>No deliveries.</p>`}`;
  return page(`payhook reference: ${tx.reference}`, body);
}

/** The dashboard: every transaction, its timeline and every delivery attempt (loopback clients only). */
export const dashboardRoutes: Route[] = [
  { method: 'GET', path: '/_dashboard', access: 'local', handle: overview },
  { method: 'GET', path: '/_dashboard/transactions/:reference', access: 'local', handle: detail },
];
