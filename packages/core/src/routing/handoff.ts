import type { ClaimInside, EventHandler, Handoff, HandlerContext, Plan, QueuedEvent } from '../contracts/handling.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { CLAIM_INSIDE } from '../base/shared-keys.js';

const QUEUED = 'queued:';

/** The key a receiver with a handoff claims: apart from the event's own key, which the worker claims when it runs the handlers. */
export const queuedKey = (dedupeKey: string): string => QUEUED + dedupeKey;

/**
 * The receiver's plan for every event the service defines when it hands off: one step that
 * enqueues, under the event's own key (the claimed key without its prefix). The worker runs the
 * merchant's handlers; the web process runs none.
 */
export function handoffPlan(handoff: Handoff, now: () => number): Plan {
  const jobOf = (event: PaymentEvent, ctx: Pick<HandlerContext, 'dedupeKey' | 'source' | 'secretIndex' | 'account'>): QueuedEvent => ({
    v: 1,
    event,
    dedupeKey: ctx.dedupeKey.slice(QUEUED.length),
    source: ctx.source,
    secretIndex: ctx.secretIndex,
    account: ctx.account,
    queuedAt: now(),
  });
  const enqueue: EventHandler & { [CLAIM_INSIDE]?: ClaimInside } = (event, ctx) => handoff.enqueue(jobOf(event, ctx), ctx);
  // An engine that commits the job with the done record can take the claim in that transaction too.
  const claiming = handoff.enqueueClaiming?.bind(handoff);
  if (claiming) enqueue[CLAIM_INSIDE] = (event, ctx, leaseMs, claimed) => claiming(jobOf(event, ctx), ctx, leaseMs, claimed);
  return { handlers: [enqueue], wantsRecord: false };
}
