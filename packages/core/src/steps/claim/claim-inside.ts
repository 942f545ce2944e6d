import type { RunInput, RunSettings } from '../run-settings.js';
import { isNonRetriableError } from '../../base/errors.js';
import { andThen, attempt, type Awaitable } from '../../base/maybe-async.js';
import type { DeliveryFields, DeliveryReport } from '../../contracts/delivery.js';
import type { ClaimInside, Plan } from '../../contracts/handling.js';
import { reportOf } from '../../observing/outcome.js';
import type { PaymentEvent } from '../../protocol/event-schema.js';
import { CLAIM_INSIDE } from '../../base/shared-keys.js';
import type { ClaimResult } from '../../storage/store-contract.js';

/** What the deadline reads of a delivery that claims inside its handler's transaction. */
export interface InsideProgress {
  token?: string;
  /** The claim is a row the handler's open transaction holds: there is no lease to keep alive. */
  inside?: boolean;
}

/**
 * The event's handler, when it can take the claim in its own transaction: it must be the only
 * step, with nothing to run between the claim and it (no record check).
 */
export function claimInsideOf(s: RunSettings, plan: Plan): ClaimInside | undefined {
  if (plan.handlers.length !== 1 || plan.wantsRecord || s.verifyBeforeHandling) return undefined;
  return (plan.handlers[0] as { [CLAIM_INSIDE]?: ClaimInside })[CLAIM_INSIDE];
}

/**
 * Claim, run and record in the handler's one commit, and resolve the delivery's report; when the
 * key was not free, go on with the store's ordinary claim's answer as after any claim (`afterClaim`).
 */
export function runClaimingInside(
  s: RunSettings,
  inside: ClaimInside,
  event: PaymentEvent,
  input: RunInput,
  fields: DeliveryFields,
  progress: InsideProgress,
  afterClaim: (claim: ClaimResult) => Awaitable<DeliveryReport>,
): Promise<DeliveryReport> {
  const context = {
    account: input.account,
    reference: event.reference,
    dedupeKey: fields.dedupeKey!,
    secretIndex: input.secretIndex,
    source: input.source,
    record: input.record,
    job: input.job,
  };
  const claimed = (token: string, attempt: number) => {
    progress.token = token;
    progress.inside = true;
    fields.attempt = attempt;
  };
  let ran: Promise<ClaimResult | { status: 'ran' }>;
  try {
    ran = inside(event, context, s.leaseMs, claimed);
  } catch (error) {
    // A store's handler that throws before its promise: the store, as a claim that throws.
    ran = Promise.reject(error);
  }
  return ran.then(
    (c) => (c.status === 'ran' ? reportOf(s.doneOutcome, fields) : afterClaim(c)),
    (error: unknown) => (progress.inside ? failedInside(s, fields, error) : reportOf('store-unavailable', { ...fields, error })),
  );
}

/**
 * The effect threw and its claim went with the rollback: the service's retry runs it again, or a
 * NonRetriableError's refusal is recorded under a claim of its own, as a handler's would be.
 */
function failedInside(s: RunSettings, fields: DeliveryFields, error: unknown): Awaitable<DeliveryReport> {
  if (!isNonRetriableError(error)) return reportOf('failed', { ...fields, error });
  const key = fields.dedupeKey!;
  const rejected = () => reportOf('rejected', { ...fields, error });
  return attempt(
    () =>
      andThen(s.ops.claim(key, s.leaseMs), (c) =>
        c.status === 'claimed' ? andThen(s.ops.complete(key, c.token, s.doneRecord.rejected), rejected) : rejected(),
      ),
    rejected,
  );
}
