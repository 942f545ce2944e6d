import type { LedgerEntry } from '@payhook/core';
import type { DeliveryOutcome } from '@payhook/core/lifecycle';
import { html, type Html } from '@payhook/core/api';
import { link, type View } from './page.js';
import { outcomeOf, toneOf } from './outcome.js';
import { finalOutcome } from './resolved.js';

/**
 * The banner after a dead letter's retry (`?after=retry&replay=<id>`): what its replay did, read
 * from the ledger (a replay of this record only, so a crafted link shows nothing else), and
 * whether the dead letter is closed. Without the replay's record (a refusal is never replayed),
 * whether it is closed only.
 */
export async function retried(view: View, e: LedgerEntry): Promise<Html> {
  const closed = e.deadLetter?.retriedBy !== undefined;
  const state = closed ? 'The dead letter is closed.' : 'The dead letter is still open.';
  const id = view.url.searchParams.get('replay');
  const replay = id ? await view.ledger.get(id) : undefined;
  if (replay === undefined || replay.replayOf !== e.id) return html`Retried: ${state.charAt(0).toLowerCase()}${state.slice(1)}`;
  const final = finalOutcome(replay);
  const shown = html`${outcomeOf(replay)} (${replay.status})`;
  const open = html` <a href="${link(view, `/deliveries/${encodeURIComponent(replay.id)}`)}">Open the replay</a>.`;
  if (final === 'duplicate') return html`Retried: ${shown}: the event was already done, so nothing ran twice. ${state}${open}`;
  const tone = toneOf(final);
  if (tone === 'good') return html`Retried: ${shown}. ${state}${open}`;
  if (tone === 'bad')
    return html`Retried: ${final === 'rejected' ? 'rejected' : 'failed'} again, ${shown}. ${closed ? 'The dead letter is closed: the replay is a dead letter in its place.' : state}${open}`;
  return html`Retried: ${shown}, not settled yet. ${state}${open}`;
}

/** How "retry all" counts what its replays answered, for the list's banner: each name a query field of its redirect. */
export const TALLY = { processed: 'processed', duplicate: 'duplicate', again: 'failed again', pending: 'not settled yet' } as const;

/** The replays' answers counted by TALLY (0s left out, so the redirect carries only what happened). */
export function tallyOf(outcomes: readonly DeliveryOutcome[]): Partial<Record<keyof typeof TALLY, number>> {
  const tally: Partial<Record<keyof typeof TALLY, number>> = {};
  for (const o of outcomes) {
    const tone = toneOf(o);
    const key = o === 'duplicate' ? 'duplicate' : tone === 'good' ? 'processed' : tone === 'bad' ? 'again' : 'pending';
    tally[key] = (tally[key] ?? 0) + 1;
  }
  return tally;
}
