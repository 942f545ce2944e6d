import type { LedgerEntry } from '@payhook/core';
import { isRefusal, type Ledger } from '@payhook/core/store';
import { html, type Html } from '@payhook/core/api';
import { link, type View } from './page.js';
import { toneOf } from './outcome.js';

/** Attempts of one payment read to find what resolved a failure: its newest, as the delivery page's timeline reads them. */
const ATTEMPTS = 100;

/** The outcome a record ended with: the late one after a 202, else the answer. */
export const finalOutcome = (e: LedgerEntry) => e.late?.outcome ?? e.outcome;

/**
 * The rule (docs/decisions/board.md, issue 51): a failure of ours (not a refusal, whose reference is the
 * sender's word) that ended red (4xx, 5xx, rejected) reads as resolved once a later attempt of
 * the same payment and event (account, reference and event name alike) ended settled and green:
 * processed, queued, duplicate or ignored.
 */
const canResolve = (e: LedgerEntry) => e.reference !== undefined && !isRefusal(e) && toneOf(finalOutcome(e)) === 'bad';
const resolves = (e: LedgerEntry, later: LedgerEntry) =>
  later.id > e.id &&
  later.reference === e.reference &&
  later.account === e.account &&
  later.event === e.event &&
  !isRefusal(later) &&
  toneOf(finalOutcome(later)) === 'good';

/** The first attempt among `attempts` that resolves `e` (the rule above), or undefined. */
export function resolverOf(e: LedgerEntry, attempts: readonly LedgerEntry[]): LedgerEntry | undefined {
  if (!canResolve(e)) return undefined;
  let first: LedgerEntry | undefined;
  for (const a of attempts) if (resolves(e, a) && (first === undefined || a.id < first.id)) first = a;
  return first;
}

/**
 * What resolved each failed row of a page, by row id: the ledger is asked once per payment among
 * the failed rows (only those), for its newest attempts, through the viewer's own ledger.
 */
export async function resolutions(ledger: Pick<Ledger, 'list'>, rows: readonly LedgerEntry[]): Promise<Map<string, LedgerEntry>> {
  const payments = new Map<string, LedgerEntry[]>();
  for (const e of rows.filter(canResolve)) {
    const key = JSON.stringify([e.account ?? null, e.reference]);
    payments.set(key, [...(payments.get(key) ?? []), e]);
  }
  const found = new Map<string, LedgerEntry>();
  await Promise.all(
    [...payments.values()].map(async (failed) => {
      const { reference, account } = failed[0]!;
      const attempts = await ledger.list({ reference, account, limit: ATTEMPTS });
      for (const e of failed) {
        const by = resolverOf(e, attempts);
        if (by) found.set(e.id, by);
      }
    }),
  );
  return found;
}

/** A dead letter's tone: red while open, neutral once a retry closed it. */
export const deadTone = (e: LedgerEntry): string => (e.deadLetter?.retriedBy === undefined ? 'bad' : 'resolved');

/**
 * How a resolver is named: the service's attempt of the event, or where it came from (a replay
 * counts its claims under a key of its own; a duplicate claimed nothing).
 */
export const resolverName = (by: LedgerEntry): string =>
  by.source === 'webhook' && by.attempt !== undefined ? `attempt ${by.attempt}` : `a later ${by.source}`;

/** " resolved by attempt 2", linked to that attempt's page. */
export const resolvedNote = (view: Pick<View, 'settings'>, by: LedgerEntry): Html =>
  html` <span class="muted">resolved by <a href="${link(view, `/deliveries/${encodeURIComponent(by.id)}`)}">${resolverName(by)}</a></span>`;
