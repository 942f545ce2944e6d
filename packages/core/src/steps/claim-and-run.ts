import type { RunInput, RunSettings } from './run-settings.js';
import { every } from '../base/clock.js';
import { isNonRetriableError } from '../base/errors.js';
import type { HandlerContext, Plan } from '../contracts/handling.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { isPaymentEventName } from '../protocol/payment-lifecycle.js';
import { andThen, attempt, isPromise, type Awaitable } from '../base/maybe-async.js';
import type { ClaimResult, Outcome } from '../storage/store-contract.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryFields, DeliveryReport } from '../contracts/delivery.js';
import { checkRecord } from './record-check.js';
import { completeLater } from './claim/complete-later.js';
import { waitForRunning } from './claim/wait-running.js';
import { claimInsideOf, runClaimingInside, type InsideProgress } from './claim/claim-inside.js';

/** Where a delivery is: the deadline reads it to choose between 503 (still claiming) and 202 (running). */
interface Progress extends InsideProgress {
  late: boolean;
  /** A copy waiting for the running delivery: at the budget it answers 409, not 503. */
  waiting?: boolean;
  /** When a wait for the running delivery must end, on the clock: the budget's end, or `waitMs` from the start. */
  end: number;
}

/**
 * Claim the event's dedupe key, run its handlers and record the outcome, all within one budget:
 * a store that hangs gets 503, a handler that outlives the budget 202 (it goes on, its claim kept
 * alive, its outcome reported later). Synchronous from start to end when the store and the
 * handlers are; the deadline is only set once something has to be awaited.
 */
export function claimAndRun(s: RunSettings, event: PaymentEvent, input: RunInput): Awaitable<DeliveryReport> {
  const key = input.key ?? s.dedupeKey(event);
  const fields: DeliveryFields = {
    account: input.account,
    reference: event.reference,
    event: event.event,
    dedupeKey: key,
    source: input.source,
    attempt: undefined,
    secretIndex: input.secretIndex ?? undefined,
    deliveryId: input.deliveryId,
  };
  const plan = isPaymentEventName(event.event) ? s.planFor(event.event) : undefined;
  if (plan === undefined || plan.handlers.length === 0) return reportOf('ignored', fields);
  const started = input.budgetMs === Infinity ? 0 : s.clock.now();
  const progress: Progress = {
    late: false,
    end: input.budgetMs === Infinity ? input.startedAt + (input.waitMs ?? 0) : started + input.budgetMs,
  };

  // Plain calls and branches rather than closures: every delivery claims (issue 32's figures).
  let result: Awaitable<DeliveryReport>;
  const inside = claimInsideOf(s, plan);
  if (inside) {
    result = runClaimingInside(s, inside, event, input, fields, progress, (c) => afterClaim(s, event, plan, input, fields, progress, c));
  } else {
    let claim: Awaitable<ClaimResult>;
    try {
      claim = s.ops.claim(key, s.leaseMs);
    } catch (error) {
      return reportOf('store-unavailable', { ...fields, error });
    }
    result = isPromise(claim)
      ? claim.then(
          (c) => afterClaim(s, event, plan, input, fields, progress, c),
          (error: unknown) => reportOf('store-unavailable', { ...fields, error }),
        )
      : afterClaim(s, event, plan, input, fields, progress, claim);
  }
  if (!isPromise(result) || input.budgetMs === Infinity) return result;
  return withinBudget(s, result, started, input, progress, fields);
}

function afterClaim(
  s: RunSettings,
  event: PaymentEvent,
  plan: Plan,
  input: RunInput,
  fields: DeliveryFields,
  progress: Progress,
  claim: ClaimResult,
): Awaitable<DeliveryReport> {
  if (progress.late) {
    // Answered 503 already: give a claim that landed after all back, so the service's retry can run the event.
    if (claim.status === 'claimed')
      void attempt(
        () => s.ops.release(fields.dedupeKey!, claim.token),
        () => false,
      );
    return reportOf('store-unavailable', fields);
  }
  if (claim.status === 'done') return reportOf('duplicate', fields);
  if (claim.status === 'in-progress') {
    if (s.onInProgress === 'retry' || progress.waiting) return reportOf('in-progress', fields);
    progress.waiting = true;
    return waitForRunning(s, fields.dedupeKey!, progress.end, () => progress.late, claim).then((c) =>
      afterClaim(s, event, plan, input, fields, progress, c),
    );
  }
  progress.waiting = false;
  progress.token = claim.token;
  fields.attempt = claim.attempt;
  const ctx: HandlerContext = {
    account: input.account,
    reference: event.reference,
    dedupeKey: fields.dedupeKey!,
    secretIndex: input.secretIndex,
    redelivery: claim.attempt > 1,
    attempt: claim.attempt,
    claimToken: claim.token,
    source: input.source,
    record: input.record,
    job: input.job,
  };
  const ran = runPlan(s, event, plan, ctx, fields, input.client);
  return input.budgetMs === Infinity && isPromise(ran) ? keptAlive(s, ctx, ran) : ran;
}

/** A run without a budget (a reconcile, a queue worker) keeps its claim alive itself while its handlers run. */
function keptAlive(s: RunSettings, ctx: HandlerContext, ran: Promise<DeliveryReport>): Promise<DeliveryReport> {
  const stop = every(s.clock, Math.max(1, Math.floor(s.leaseMs / 3)), () => {
    void attempt(
      () => s.ops.extend(ctx.dedupeKey, ctx.claimToken, s.leaseMs),
      () => false,
    );
  });
  return ran.finally(stop);
}

/** Race the delivery against its deadline on the receiver's one timer structure. */
function withinBudget(
  s: RunSettings,
  result: Promise<DeliveryReport>,
  started: number,
  { budgetMs, waitUntil, startedAt }: RunInput,
  progress: Progress,
  fields: DeliveryFields,
): Promise<DeliveryReport> {
  // The steps never reject; should one ever, the delivery still gets an answer (500: the service retries).
  const settled = result.then(undefined, (error: unknown) => reportOf('failed', { ...fields, error }));
  return new Promise((resolve) => {
    const deadline = s.deadlines.add(started + budgetMs, () => {
      progress.late = true;
      const token = progress.token;
      if (progress.waiting) return resolve(reportOf('in-progress', fields));
      if (token === undefined) {
        const error = new Error(`[@payhook/core] the store did not answer a claim within ${budgetMs} ms; check that it is reachable.`);
        return resolve(reportOf('store-unavailable', { ...fields, error }));
      }
      // Past the budget: answer now, keep the claim alive while the handler runs, report its outcome later.
      // Where the platform may freeze after the answer and gave no waitUntil, 'retry' answers 503.
      resolve(reportOf(waitUntil || s.afterBudget === 'accept' ? 'accepted' : 'deferred', fields));
      if (!waitUntil && s.afterBudget === 'accept') s.acceptedUnguarded?.();
      const key = fields.dedupeKey!;
      const extend = () =>
        void attempt(
          () => s.ops.extend(key, token, s.leaseMs),
          () => false,
        );
      // A claim inside the handler's transaction is a row that transaction holds until it ends.
      if (!progress.inside) extend();
      const stop = progress.inside ? () => {} : every(s.clock, Math.max(1, Math.floor(s.leaseMs / 3)), extend);
      const reported = settled.then((late) => {
        stop();
        s.report({ ...late, late: true, durationMs: s.clock.now() - startedAt });
      });
      waitUntil?.(reported);
    });
    void settled.then((r) => {
      if (progress.late) return;
      s.deadlines.cancel(deadline);
      resolve(r);
    });
  });
}

/** The record check if asked for, the handlers, then the done record or the release. */
function runPlan(s: RunSettings, event: PaymentEvent, plan: Plan, ctx: HandlerContext, fields: DeliveryFields, client = s.client) {
  if (!s.verifyBeforeHandling && !plan.wantsRecord) return runHandlersAndComplete(s, event, plan, ctx, fields);
  return checkRecord(client, event, ctx).then((refused) =>
    refused ? andThen(release(s, ctx), () => ({ ...refused, ...fields })) : runHandlersAndComplete(s, event, plan, ctx, fields),
  );
}

function runHandlersAndComplete(
  s: RunSettings,
  event: PaymentEvent,
  plan: Plan,
  ctx: HandlerContext,
  fields: DeliveryFields,
): Awaitable<DeliveryReport> {
  let ran: Awaitable<void>;
  try {
    ran = s.run(plan.handlers, event, ctx);
  } catch (error) {
    return threw(s, ctx, fields, error);
  }
  // One turn after the last handler settles, the done record is written. Through the helper:
  // measured within the noise of the hand-written branch it replaced (docs/decisions/house.md, issue 55).
  return andThen(
    ran,
    () => complete(s, ctx, 'ok', fields),
    (error: unknown) => threw(s, ctx, fields, error),
  );
}

/** Give the claim up so the service's retry runs the event again; if the store fails, the lease runs out by itself. */
const release = (s: RunSettings, ctx: HandlerContext) =>
  attempt(
    () => s.ops.release(ctx.dedupeKey, ctx.claimToken),
    () => false,
  );

function threw(s: RunSettings, ctx: HandlerContext, fields: DeliveryFields, error: unknown): Awaitable<DeliveryReport> {
  if (isNonRetriableError(error)) return andThen(complete(s, ctx, 'rejected', fields), () => reportOf('rejected', { ...fields, error }));
  return andThen(release(s, ctx), () => reportOf('failed', { ...fields, error }));
}

/** Write the done record; if the store fails now, the handlers ran: answer as done and keep trying in the background. */
function complete(s: RunSettings, ctx: HandlerContext, outcome: Outcome, fields: DeliveryFields): Awaitable<DeliveryReport> {
  const { dedupeKey: key, claimToken: token } = ctx;
  const later = () => {
    completeLater(s, key, token, outcome, fields);
    return reportOf(s.doneOutcome, fields);
  };
  let held: Awaitable<boolean>;
  try {
    held = s.ops.complete(key, token, s.doneRecord[outcome]);
  } catch {
    return later();
  }
  // A branch rather than andThen: every delivery writes its done record (issue 32's figures).
  return isPromise(held) ? held.then((h) => completed(s, h, key, fields), later) : completed(s, held, key, fields);
}

function completed(s: RunSettings, held: boolean, key: string, fields: DeliveryFields): DeliveryReport {
  if (held) return reportOf(s.doneOutcome, fields);
  const error = new Error(
    `[@payhook/core] the claim on ${key} expired before its handler finished, so another delivery may have run it too. Raise leaseMs above your slowest handler.`,
  );
  return reportOf(s.doneOutcome, { ...fields, error });
}
