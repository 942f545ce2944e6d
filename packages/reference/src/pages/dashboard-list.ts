import type { TransactionStatus } from '@payhook/core';
import { TRANSACTION_STATUSES } from '@payhook/core/lifecycle';
import type { RouteRequest } from '../contract/context.js';
import type { Transaction } from '../domain/transactions.js';
import { transactionPath } from './dashboard-detail.js';
import { errorPage, html, page, type Html } from './html.js';
import { refreshNote, refreshSeconds } from './refresh.js';

/** Transactions on one page of the dashboard's list. */
const DASHBOARD_PAGE_SIZE = 20;
/** The longest search the filter takes. */
const MAX_SEARCH = 100;

/** The list's filters, from the query string: a status, and text searched in references and merchant references. */
interface Filters {
  status: TransactionStatus | '';
  q: string;
}

/** Which page: the transactions older than `seq` (`before`), or those newer than it (`after`); undefined for the newest. */
type Position = { direction: 'before' | 'after'; seq: number } | undefined;

/** The list's URL for `filters`, with a page cursor or none (the newest page). */
function listHref(filters: Filters, cursor?: { direction: 'before' | 'after'; value: string }): string {
  const params = new URLSearchParams();
  if (filters.status) params.set('status', filters.status);
  if (filters.q) params.set('q', filters.q);
  if (cursor) params.set(cursor.direction, cursor.value);
  const query = params.toString();
  return query ? `/_dashboard?${query}` : '/_dashboard';
}

/** A cursor is only good for the filters and the direction that made it. */
const binding = (filters: Filters, direction: 'before' | 'after') => `dashboard|${direction}|${filters.status}|${filters.q}`;

/** A clear 400 page for a query the list cannot take, with a way on: all transactions, or the newest page of the same filters. */
function refused(title: string, message: Html, newestOf?: Filters): Response {
  const way = newestOf
    ? html`<a id="start-again" href="${listHref(newestOf)}">Start again from the newest</a>`
    : html`<a id="start-again" href="/_dashboard">Show all transactions</a>`;
  return errorPage(400, title, html`${message} ${way}`);
}

/** The filters and the page asked for, or the page that says what is wrong with them. */
function readQuery({ ctx, url }: RouteRequest): { filters: Filters; position: Position } | Response {
  const status = url.searchParams.get('status') ?? '';
  const q = (url.searchParams.get('q') ?? '').trim();
  if (status !== '' && !(TRANSACTION_STATUSES as readonly string[]).includes(status)) {
    return refused(
      'Unknown status',
      html`There is no transaction status “${status}”: filter by one of ${TRANSACTION_STATUSES.join(', ')}, or by any status.`,
    );
  }
  if (q.length > MAX_SEARCH) {
    return refused(
      'Search too long',
      html`The search is ${q.length} characters long: search at most ${MAX_SEARCH} characters of a reference or a merchant reference.`,
    );
  }
  const filters: Filters = { status: status as Filters['status'], q };
  const before = url.searchParams.get('before');
  const after = url.searchParams.get('after');
  if (before !== null && after !== null) {
    return refused(
      'Page link not valid',
      html`A page link has either before or after, not both: follow the Newer and Older links of the list.`,
      filters,
    );
  }
  const direction = before !== null ? 'before' : after !== null ? 'after' : undefined;
  if (direction === undefined) return { filters, position: undefined };
  const decoded = ctx.cursors.decode((before ?? after)!, binding(filters, direction));
  if (!decoded.ok) {
    const why =
      decoded.reason === 'expired'
        ? 'This page link has expired (page links last a limited time).'
        : 'This page link is not valid: it was changed, it was made for other filters, or the service restarted since.';
    return refused('Page link not valid', html`${why}`, filters);
  }
  return { filters, position: { direction, seq: decoded.position } };
}

function matches(filters: Filters): (tx: Transaction) => boolean {
  const q = filters.q.toLowerCase();
  return (tx) =>
    (filters.status === '' || tx.status === filters.status) &&
    (q === '' || tx.reference.toLowerCase().includes(q) || tx.merchantReference.toLowerCase().includes(q));
}

function filterForm(filters: Filters) {
  const options = TRANSACTION_STATUSES.map((s) => html`<option value="${s}"${s === filters.status ? html` selected` : ''}>${s}</option>`);
  return html`<form id="filters" method="get" action="/_dashboard">
<label>Status <select name="status"><option value="">any</option>${options}</select></label>
<label>Reference or merchant reference <input type="search" name="q" value="${filters.q}" maxlength="${MAX_SEARCH}"></label>
<button type="submit" id="filter">Filter</button> <a href="/_dashboard">Clear</a></form>`;
}

/**
 * The dashboard's list: every transaction of every merchant, newest first, DASHBOARD_PAGE_SIZE a
 * page, filtered by `status` and by `q` (part of a reference or merchant reference). Pages are
 * reached with signed cursors (`before`, `after`), as the API's list is, so a page stays the same
 * while new transactions come in. While a shown delivery is under way the page reloads itself.
 */
export function overview(req: RouteRequest): Response {
  const { ctx } = req;
  const query = readQuery(req);
  if (query instanceof Response) return query;
  const { filters, position } = query;
  const matching = ctx.transactions.all().filter(matches(filters));
  let items = matching.slice(0, DASHBOARD_PAGE_SIZE);
  if (position?.direction === 'before') items = matching.filter((tx) => tx.seq < position.seq).slice(0, DASHBOARD_PAGE_SIZE);
  // Newer: the page just above; once that reaches the newest, the newest full page.
  if (position?.direction === 'after') {
    const newer = matching.filter((tx) => tx.seq > position.seq);
    if (newer.length > DASHBOARD_PAGE_SIZE) items = newer.slice(-DASHBOARD_PAGE_SIZE);
  }
  const first = items.length ? matching.indexOf(items[0]!) : 0;
  const shownDeliveries = items.flatMap((tx) => ctx.dispatcher.list({ reference: tx.reference }));
  const refresh = refreshSeconds(shownDeliveries, ctx.clock.now());

  const rows = items.map((tx) => {
    const deliveries = shownDeliveries.filter((d) => d.reference === tx.reference);
    return html`<tr>
<td><a href="${transactionPath(tx.reference)}">${tx.reference}</a></td><td>${tx.merchantId}</td><td>${tx.mode}</td>
<td>${tx.merchantReference}</td><td>${tx.amount} ${tx.currency}</td><td class="status">${tx.status}</td>
<td>${new Date(tx.createdAt).toISOString()}</td><td>${deliveries.map((d) => `${d.event}: ${d.state}`).join(', ')}</td></tr>`;
  });
  const filtered = filters.status !== '' || filters.q !== '';
  const empty = position
    ? html`No transactions on this page. <a href="${listHref(filters)}">Show the newest</a>`
    : filtered
      ? html`No transactions match these filters. <a href="/_dashboard">Clear the filters</a>`
      : 'No transactions yet.';
  const newer =
    items.length > 0 && first > 0
      ? listHref(filters, { direction: 'after', value: ctx.cursors.encode(items[0]!.seq, binding(filters, 'after')) })
      : undefined;
  const older =
    items.length > 0 && first + items.length < matching.length
      ? listHref(filters, { direction: 'before', value: ctx.cursors.encode(items.at(-1)!.seq, binding(filters, 'before')) })
      : undefined;
  const paging = html`<p id="paging">${items.length ? html`<span id="showing">${first + 1}–${first + items.length} of ${matching.length}</span>` : ''}
${newer ? html` <a id="newer" href="${newer}">← Newer</a>` : ''}${older ? html` <a id="older" href="${older}">Older →</a>` : ''}</p>`;

  const body = html`<h1>Transactions</h1><p>Service clock: <code id="clock">${new Date(ctx.clock.now()).toISOString()}</code></p>
${filterForm(filters)}${refreshNote(refresh)}
<table id="transactions"><thead><tr><th>Reference</th><th>Merchant</th><th>Mode</th><th>Merchant reference</th><th>Amount</th><th>Status</th><th>Created</th><th>Deliveries</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="8">${empty}</td></tr>`}</tbody></table>${paging}`;
  return page('payhook reference: dashboard', body, 200, refresh);
}
