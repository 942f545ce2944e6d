import type { LedgerEntry, LedgerQuery } from '@payhook/core';
import { html } from '../html.js';
import { at, link, page, type View } from '../page.js';
import { isOutcome, OUTCOME_NAMES, outcomeOf } from './outcome.js';

/** The longest filter value kept: the ledger cuts references and event names at 128 characters. */
const MAX_FILTER = 128;

/** The list's filters, read from the query string: what the ledger can find, and what was not understood. */
export function filtersOf(url: URL): { query: LedgerQuery; form: Record<string, string>; problems: string[] } {
  const p = url.searchParams;
  const text = (name: string) => (p.get(name) ?? '').trim().slice(0, MAX_FILTER);
  const form = {
    reference: text('reference'),
    event: text('event'),
    outcome: text('outcome'),
    since: text('since'),
    until: text('until'),
    dead: text('dead'),
  };
  const problems: string[] = [];
  const time = (name: 'since' | 'until') => {
    if (form[name] === '') return undefined;
    // A datetime-local field (no zone) is read as UTC, as the board shows times.
    const t = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(form[name]) ? form[name] : `${form[name]}Z`);
    if (Number.isNaN(t)) problems.push(`"${form[name]}" is not a time; use the form's date and time fields.`);
    return Number.isNaN(t) ? undefined : t;
  };
  if (form.outcome !== '' && !isOutcome(form.outcome)) problems.push(`"${form.outcome}" is not an outcome payhook gives.`);
  const query: LedgerQuery = {
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

/** The delivery list: filters, a page of records newest first, and the link to the next page. */
export async function listView(view: View): Promise<Response> {
  const ledger = view.settings.receiver.store.ledger!;
  const { query, form, problems } = filtersOf(view.url);
  const size = view.settings.pageSize;
  // One record past the page says whether there is a next one.
  const found = await ledger.list({ ...query, limit: size + 1 });
  const rows = found.slice(0, size);
  const next = found.length > size ? rows.at(-1)?.id : undefined;
  const notice = noticeOf(view.url);
  const body = html`
<h2>Deliveries</h2>
${notice && html`<p class="notice" role="status">${notice}</p>`}
${problems.map((p) => html`<p class="notice error" role="alert">${p}</p>`)}
<form class="filters" method="get" action="${link(view, '/')}" role="search" aria-label="Filter deliveries">
<label>Reference<input name="reference" value="${form.reference}" maxlength="${MAX_FILTER}"></label>
<label>Event<input name="event" value="${form.event}" maxlength="${MAX_FILTER}" placeholder="payment.success"></label>
<label>Outcome<select name="outcome"><option value="">any</option>${OUTCOME_NAMES.map(
    (o) => html`<option value="${o}"${o === form.outcome ? html` selected` : ''}>${o}</option>`,
  )}</select></label>
<label>From (UTC)<input name="since" type="datetime-local" step="1" value="${form.since}"></label>
<label>Before (UTC)<input name="until" type="datetime-local" step="1" value="${form.until}"></label>
<label>Dead letters<select name="dead"><option value="">any record</option><option value="open"${form.dead === 'open' ? html` selected` : ''}>open dead letters only</option></select></label>
<button type="submit">Filter</button> <a href="${link(view, '/')}">Clear</a>
</form>
${view.canAct && form.dead === 'open' && rows.length > 0 ? html`<p class="actions"><a href="${link(view, '/confirm', { action: 'retry-all' })}">Retry all open dead letters…</a></p>` : ''}
${rows.length === 0 ? html`<p id="empty">No deliveries match.</p>` : table(view, rows)}
<nav class="pager" aria-label="Pages">${query.before ? html`<a href="${link(view, '/', { ...form, before: undefined })}">Newest</a>` : ''}${next ? html`<a rel="next" href="${link(view, '/', { ...form, before: next })}">Older deliveries</a>` : ''}</nav>`;
  return page(view, 'Deliveries', body);
}

function table(view: View, rows: LedgerEntry[]) {
  return html`<table id="deliveries"><caption class="visually-hidden">Deliveries, newest first</caption>
<thead><tr><th scope="col">Received</th><th scope="col">Reference</th><th scope="col">Event</th><th scope="col">Outcome</th><th scope="col">Status</th><th scope="col">Attempt</th><th scope="col">Signature</th><th scope="col">Took</th></tr></thead>
<tbody>${rows.map(
    (e) =>
      html`<tr data-id="${e.id}"><td><a href="${link(view, `/deliveries/${encodeURIComponent(e.id)}`)}">${at(e.receivedAt)}</a></td><td class="value">${e.reference ?? html`<span class="muted">none</span>`}</td><td>${e.event ?? ''}</td><td>${outcomeOf(e)}${e.deadLetter ? html` <span class="outcome bad">${e.deadLetter.retriedBy ? 'dead letter, retried' : 'dead letter'}</span>` : ''}</td><td class="num">${e.status}</td><td class="num">${e.attempt ?? ''}</td><td>${e.signature}</td><td class="num">${Math.round(e.durationMs)} ms</td></tr>`,
  )}</tbody></table>`;
}

/** What the last action did, from the numbers its redirect carried. */
function noticeOf(url: URL): string | undefined {
  const n = (name: string) => (/^\d{1,9}$/.test(url.searchParams.get(name) ?? '') ? Number(url.searchParams.get(name)) : undefined);
  const erased = n('erased');
  if (erased !== undefined) return `Erased ${erased} record${erased === 1 ? '' : 's'}.`;
  const retried = n('retried');
  if (retried !== undefined) return `Retried ${retried} dead letter${retried === 1 ? '' : 's'}: ${n('closed') ?? 0} closed.`;
  return undefined;
}
