import type { LedgerEntry, LedgerQuery } from '@payhook/core';
import { html } from '@payhook/core/api';
import { link, page, type View } from './page.js';
import { isAccountName } from '../base/scope.js';
import { findByMerchant, MERCHANT_SCAN } from './merchant.js';
import { isOutcome, OUTCOME_NAMES } from './outcome.js';
import { resolutions } from './resolved.js';
import { TALLY } from './retried.js';
import { table } from './table.js';

/** The longest filter value kept: the ledger cuts references and event names at 128 characters. */
const MAX_FILTER = 128;
const FIELDS = ['account', 'reference', 'merchant', 'event', 'outcome', 'since', 'until', 'dead'] as const;
export type Filters = Record<(typeof FIELDS)[number], string>;

/**
 * The list's filters, read from the query string: what the ledger can find, and what was not
 * understood. The account is a filter in the platform view only; an account's viewer is held to
 * theirs by `view.ledger`, whatever the query string says.
 */
export function filtersOf(view: Pick<View, 'url' | 'platform'>): { query: LedgerQuery; form: Filters; problems: string[] } {
  const p = view.url.searchParams;
  const text = (name: string) => (p.get(name) ?? '').trim().slice(0, MAX_FILTER);
  const form = Object.fromEntries(FIELDS.map((f) => [f, text(f)])) as Filters;
  const problems: string[] = [];
  const time = (name: 'since' | 'until') => {
    if (form[name] === '') return undefined;
    // A datetime-local field (no zone) is read as UTC, as the board shows times.
    const t = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(form[name]) ? form[name] : `${form[name]}Z`);
    if (Number.isNaN(t)) problems.push(`"${form[name]}" is not a time; use the form's date and time fields.`);
    return Number.isNaN(t) ? undefined : t;
  };
  if (form.outcome !== '' && !isOutcome(form.outcome)) problems.push(`"${form.outcome}" is not an outcome payhook gives.`);
  if (!view.platform) form.account = '';
  else if (form.account !== '' && !isAccountName(form.account)) {
    const named: string = form.account;
    problems.push(`"${named.slice(0, 64)}" is not an account name: 1 to 64 letters, digits, _ or -.`);
  }
  const query: LedgerQuery = {
    account: isAccountName(form.account) ? form.account : undefined,
    reference: form.reference || undefined,
    event: form.event || undefined,
    outcome: isOutcome(form.outcome) ? form.outcome : undefined,
    since: time('since'),
    until: time('until'),
    deadLetters: form.dead === 'open' ? 'open' : undefined,
    before: text('before') || undefined,
  };
  return { query, form, problems };
}

/** The delivery list: filters, the chart, a page of records newest first, the next page's link, and live updates on the first page. */
export async function listView(view: View): Promise<Response> {
  const ledger = view.ledger;
  const { query, form, problems } = filtersOf(view);
  const size = view.settings.pageSize;
  let rows: LedgerEntry[];
  let next: string | undefined;
  let scanNote = '';
  if (form.merchant !== '') {
    const found = await findByMerchant(ledger, query, form.merchant, size);
    rows = found.rows;
    next = found.next;
    if (found.scanned >= MERCHANT_SCAN)
      scanNote = `Merchant references are read from kept bodies: these are the matches among the ${MERCHANT_SCAN.toLocaleString('en-US')} records read; "Older deliveries" reads on.`;
  } else {
    // One record past the page says whether there is a next one.
    const found = await ledger.list({ ...query, limit: size + 1 });
    rows = found.slice(0, size);
    next = found.length > size ? rows.at(-1)?.id : undefined;
  }
  const firstPage = query.before === undefined;
  const live = firstPage && view.settings.live.maxOpen > 0 ? link(view, '/live', { ...form, after: rows[0]?.id }) : undefined;
  const notice = noticeOf(view.url);
  const body = html`
<h2>Deliveries</h2>
${notice && html`<p class="notice" role="status">${notice}</p>`}
${problems.map((p) => html`<p class="notice error" role="alert">${p}</p>`)}
${scanNote && html`<p class="notice">${scanNote}</p>`}
<form class="filters" method="get" action="${link(view, '/')}" role="search" aria-label="Filter deliveries">
${view.platform ? html`<label>Account<input name="account" value="${form.account}" maxlength="64" placeholder="acct_7Q2"></label>` : ''}
<label>Reference<input name="reference" value="${form.reference}" maxlength="${MAX_FILTER}"></label>
<label>Merchant reference<input name="merchant" value="${form.merchant}" maxlength="${MAX_FILTER}"></label>
<label>Event<input name="event" value="${form.event}" maxlength="${MAX_FILTER}" placeholder="payment.success"></label>
<label>Outcome<select name="outcome"><option value="">any</option>${OUTCOME_NAMES.map(
    (o) => html`<option value="${o}"${o === form.outcome ? html` selected` : ''}>${o}</option>`,
  )}</select></label>
<label>From (UTC)<input name="since" type="datetime-local" step="1" value="${form.since}"></label>
<label>Before (UTC)<input name="until" type="datetime-local" step="1" value="${form.until}"></label>
<label>Dead letters<select name="dead"><option value="">any record</option><option value="open"${form.dead === 'open' ? html` selected` : ''}>open dead letters only</option></select></label>
<button type="submit">Filter</button> <a href="${link(view, '/')}">Clear</a>
</form>
${firstPage ? html`<img id="chart" class="chart" src="${link(view, '/chart.svg', form)}" alt="Deliveries per minute over the last hour, by outcome" width="600" height="158">` : ''}
${view.canAct && form.dead === 'open' && rows.length > 0 ? html`<p class="actions"><a href="${link(view, '/confirm', { action: 'retry-all', account: query.account })}">Retry all open dead letters…</a></p>` : ''}
<p id="live-status" class="muted" role="status" aria-live="polite"></p>
${rows.length === 0 ? html`<p id="empty">No deliveries match.</p>` : ''}
${table(view, rows, live, await resolutions(ledger, rows))}
<nav class="pager" aria-label="Pages">${firstPage ? '' : html`<a href="${link(view, '/', { ...form })}">Newest</a>`}${next ? html`<a rel="next" href="${link(view, '/', { ...form, before: next })}">Older deliveries</a>` : ''}</nav>
${view.canAct ? eraseCustomer(view, query.account) : ''}`;
  return page(view, 'Deliveries', body, 200, live !== undefined);
}

/** The way to a customer's erasure: their email or phone, then the confirmation (in the platform view, of the account filtered on). */
const eraseCustomer = (view: View, account: string | undefined) => html`<details class="erase"><summary>Erase a customer’s records</summary>
<form method="get" action="${link(view, '/confirm')}" class="filters"><input type="hidden" name="action" value="erase-customer">${account && html`<input type="hidden" name="account" value="${account}">`}
<label>Email<input name="email" type="email" maxlength="${MAX_FILTER}"></label><label>or phone<input name="phone" type="tel" maxlength="${MAX_FILTER}"></label>
<button type="submit">Erase…</button></form></details>`;

/** What the last action did, from the numbers its redirect carried. */
function noticeOf(url: URL): string | undefined {
  const n = (name: string) => (/^\d{1,9}$/.test(url.searchParams.get(name) ?? '') ? Number(url.searchParams.get(name)) : undefined);
  const erased = n('erased');
  if (erased !== undefined) return `Erased ${erased} record${erased === 1 ? '' : 's'}.`;
  const retried = n('retried');
  if (retried === undefined) return undefined;
  // What the replays answered (views/retried.ts, TALLY), then how many letters closed.
  const answered = Object.entries(TALLY).flatMap(([key, words]) => (n(key) ? [`${n(key)} ${words}`] : []));
  return `Retried ${retried} dead letter${retried === 1 ? '' : 's'}: ${answered.length ? `${answered.join(', ')}; ` : ''}${n('closed') ?? 0} closed.`;
}
