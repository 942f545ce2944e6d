import type { LedgerEntry } from '@payhook/core';
import { html, lines, type Html } from '@payhook/core/api';
import { at, link, noSuchDelivery, page, type View } from './page.js';
import { outcomeBadge, outcomeOf, toneOf } from './outcome.js';
import { resolvedNote, resolverOf } from './resolved.js';
import { retried } from './retried.js';

/** Attempts shown in a reference's timeline. */
const TIMELINE = 100;

/** One delivery: what came, what was answered, what happened later, its body, and every attempt of its reference. */
export async function deliveryView(view: View, id: string): Promise<Response> {
  // Another account's record reads as missing: the same 404 as an id that never was.
  const e = await view.ledger.get(id);
  if (!e) return noSuchDelivery(view, id);
  // A reference is a payment of one account: another account's equal reference is another payment.
  const attempts =
    e.reference === undefined
      ? [e]
      : (await view.ledger.list({ reference: e.reference, account: e.account, limit: TIMELINE }))
          .filter((a) => a.account === e.account)
          .reverse();
  // A failure that a later attempt of its payment settled reads as resolved (views/resolved.ts).
  const by = resolverOf(e, attempts);
  const note = by ? resolvedNote(view, by) : '';
  const body = html`
<h2>Delivery <code class="value">${e.id}</code></h2>
${await notice(view, e)}
<dl class="facts" id="facts">
<dt>Received</dt><dd>${at(e.receivedAt)}</dd>
${view.settings.accounts ? html`<dt>Account</dt><dd>${e.account ?? 'none (no account was resolved)'}</dd>` : ''}
<dt>Source</dt><dd>${e.source}${e.replayOf ? html`, replay of <a href="${link(view, `/deliveries/${encodeURIComponent(e.replayOf)}`)}">${e.replayOf}</a>${e.forced ? ' (forced)' : ''}` : ''}</dd>
<dt>Reference</dt><dd class="value">${e.reference ?? 'none'}</dd>
<dt>Event</dt><dd>${e.event ?? 'none'}</dd>
<dt>Attempt</dt><dd>${e.attempt === undefined ? 'nothing was claimed' : `${e.attempt} of the event`}</dd>
<dt>Signature</dt><dd>${e.signature}${e.secretIndex === undefined ? '' : `, secret #${e.secretIndex + 1} of the configured ones`}</dd>
<dt>Answer</dt><dd>${outcomeBadge(e.outcome, e.late || !by ? toneOf(e.outcome) : 'resolved')}, ${e.status}, in ${Math.round(e.durationMs)} ms${!e.late && note}</dd>
<dt>Late outcome</dt><dd>${e.late ? html`${outcomeBadge(e.late.outcome, by ? 'resolved' : toneOf(e.late.outcome))} after ${Math.round(e.late.durationMs)} ms${note}` : 'none'}</dd>
<dt>Error</dt><dd class="value">${e.error ?? e.late?.error ?? 'none'}</dd>
<dt>Dead letter</dt><dd>${deadLetter(view, e)}</dd>
</dl>
${actions(view, e)}
<h3>Body</h3>
${bodyOf(e)}
<h3>Every attempt for this reference</h3>
<ol class="timeline" id="timeline">${attempts.map(
    (a) =>
      html`<li${a.id === e.id ? html` class="current" aria-current="true"` : ''}><a href="${link(view, `/deliveries/${encodeURIComponent(a.id)}`)}">${at(a.receivedAt)}</a> ${a.source} ${a.event ?? ''}: ${outcomeOf(a, resolverFor(view, a, attempts))} (${a.status})${a.attempt === undefined ? '' : `, attempt ${a.attempt}`}</li>`,
  )}</ol>`;
  return page(view, `Delivery ${e.reference ?? e.id}`, body);
}

function resolverFor(view: View, a: LedgerEntry, attempts: LedgerEntry[]): Html | undefined {
  const by = resolverOf(a, attempts);
  return by && resolvedNote(view, by);
}

function deadLetter(view: View, e: LedgerEntry): Html | string {
  if (!e.deadLetter) return 'no';
  const { reason, at: when, retriedBy } = e.deadLetter;
  return html`${reason}, ${at(when)}${retriedBy ? html`; retried by <a href="${link(view, `/deliveries/${encodeURIComponent(retriedBy)}`)}">${retriedBy}</a>` : '; open'}`;
}

/** The body as it was kept: pretty-printed when it is JSON, else as text; its hash when only that was kept. */
function bodyOf(e: LedgerEntry): Html {
  if (e.body !== undefined && e.bodyEncoding !== 'base64') {
    let text = e.body;
    try {
      text = JSON.stringify(JSON.parse(e.body), null, 2);
    } catch {} // not JSON: shown as it came
    return html`<pre class="body" id="body" tabindex="0">${lines(text)}</pre>`;
  }
  if (e.body !== undefined) return html`<p>Not UTF-8 text; ${e.body.length} characters of base64 kept.</p>`;
  const hash = e.bodySha256 ? html`<p>Only its SHA-256 was kept: <code class="value" id="hash">${e.bodySha256}</code></p>` : '';
  const prefix = e.bodyPrefix ? html`<p>It began:</p><pre class="body" id="prefix">${e.bodyPrefix}</pre>` : '';
  return hash || prefix ? html`${hash}${prefix}` : html`<p>Not kept.</p>`;
}

/** The actions this record allows, each a link to its confirmation. */
function actions(view: View, e: LedgerEntry): Html | string {
  if (!view.canAct) return '';
  const to = (action: string, label: string, extra: Record<string, string> = {}) =>
    html`<a href="${link(view, '/confirm', { action, id: e.id, ...extra })}">${label}</a>`;
  // A refusal never runs; anything signed, reconciled or replayed may.
  const replayable = e.source !== 'webhook' || e.signature === 'valid' ? [to('replay', 'Replay…'), to('force', 'Force replay…')] : [];
  const retry = e.deadLetter && !e.deadLetter.retriedBy ? [to('retry', 'Retry dead letter…')] : [];
  // In the platform view the payment is this account's: its erasure leaves another account's equal reference whole.
  const account: Record<string, string> = view.platform && e.account !== undefined ? { account: e.account } : {};
  const erase = e.reference !== undefined ? [to('erase', 'Erase this payment’s records…', { reference: e.reference, ...account })] : [];
  const all = [...replayable, ...retry, ...erase];
  return all.length === 0 ? '' : html`<nav class="actions" aria-label="Actions">${all}</nav>`;
}

/** What the action that led here did. */
async function notice(view: View, e: LedgerEntry): Promise<Html | string> {
  const after = view.url.searchParams.get('after');
  if (after === 'replay' || after === 'force')
    return html`<p class="notice" role="status">Replayed${after === 'force' ? ' (forced)' : ''}: ${outcomeBadge(e.outcome)} (${e.status}).</p>`;
  if (after === 'retry') return html`<p class="notice" role="status">${await retried(view, e)}</p>`;
  return '';
}
