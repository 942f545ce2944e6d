import type { Handoff } from '../contracts/handling.js';
import type { EventHandler, Plan } from '../contracts/handling.js';

const QUEUED = 'queued:';

/** The key a receiver with a handoff claims: apart from the event's own key, which the worker claims when it runs the handlers. */
export const queuedKey = (dedupeKey: string): string => QUEUED + dedupeKey;

/**
 * The receiver's plan for every event the service defines when it hands off: one step that
 * enqueues, under the event's own key (the claimed key without its prefix). The worker runs the
 * merchant's handlers; the web process runs none.
 */
export function handoffPlan(handoff: Handoff, now: () => number): Plan {
  const enqueue: EventHandler = (event, ctx) =>
    handoff.enqueue(
      { v: 1, event, dedupeKey: ctx.dedupeKey.slice(QUEUED.length), source: ctx.source, secretIndex: ctx.secretIndex, queuedAt: now() },
      ctx,
    );
  return { handlers: [enqueue], wantsRecord: false };
}
