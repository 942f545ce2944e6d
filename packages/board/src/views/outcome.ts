import { OUTCOMES, type DeliveryOutcome } from '@payhook/core/lifecycle';
import type { LedgerEntry } from '@payhook/core';
import { html, type Html } from '@payhook/core/api';

/** An outcome as the board shows it: its name, coloured by what it means, its description as the title. */
export function outcomeBadge(outcome: DeliveryOutcome, tone: string = toneOf(outcome)): Html {
  return html`<span class="outcome ${tone}" title="${OUTCOMES[outcome]?.description ?? ''}">${outcome}</span>`;
}

/** Red for a refusal or a dead letter, green for settled, amber for the rest (accepted, held, in progress). */
export function toneOf(outcome: DeliveryOutcome): 'bad' | 'good' | 'warn' | '' {
  const facts = OUTCOMES[outcome];
  if (facts === undefined) return '';
  return facts.status >= 400 || facts.deadLetter === 'always' ? 'bad' : facts.settled ? 'good' : 'warn';
}

/**
 * The answer, and the late outcome after a 202; with `resolved` (views/resolved.ts, what a later
 * attempt settled), the final one in the neutral tone, followed by that note.
 */
export function outcomeOf(e: LedgerEntry, resolved?: Html): Html {
  const last = (outcome: DeliveryOutcome) => outcomeBadge(outcome, resolved === undefined ? toneOf(outcome) : 'resolved');
  return e.late === undefined ? html`${last(e.outcome)}${resolved}` : html`${outcomeBadge(e.outcome)} → ${last(e.late.outcome)}${resolved}`;
}

export const isOutcome = (value: string): value is DeliveryOutcome => Object.hasOwn(OUTCOMES, value);
export const OUTCOME_NAMES = Object.keys(OUTCOMES) as DeliveryOutcome[];

/** The event as a row shows it, with where it came from when that is not the service's webhook (a replay, a reconcile). */
export const eventLabel = (e: Pick<LedgerEntry, 'event' | 'source'>): string =>
  [e.event ?? '', e.source === 'webhook' ? '' : e.source].filter((x) => x !== '').join(' · ');
