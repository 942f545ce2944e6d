import type { TransactionRecord } from '../api-schema.js';
import type { HandlerContext } from '../event-router.js';
import type { PaymentEvent } from '../event-schema.js';
import { AGREEING_STATUSES } from '../lifecycle.js';
import { reportOf, type DeliveryReport } from './outcome.js';

/** The part of `@payhook/client` the receiver uses to ask the service for the authoritative record. */
export interface RecordClient {
  transactions: {
    verify(reference: string): Promise<TransactionRecord>;
    retrieve(reference: string): Promise<TransactionRecord>;
  };
}

/**
 * The record check, for handlers registered with `{ verify: true }`: put the service's own record
 * on `ctx`, or return the report that says why the handlers must not run (the record disagrees:
 * `mismatch`; the service could not be asked: `verify-unavailable`).
 */
export async function checkRecord(client: RecordClient, event: PaymentEvent, ctx: HandlerContext): Promise<DeliveryReport | undefined> {
  const { transactions } = client;
  try {
    ctx.record ??=
      event.event === 'payment.success'
        ? // verify answers 400 for anything but completed; a refund since then still agrees with the success.
          await transactions.verify(event.reference).catch((e: { status?: number }) => {
            if (e?.status === 400) return transactions.retrieve(event.reference);
            throw e;
          })
        : await transactions.retrieve(event.reference);
  } catch (error) {
    // 404 (not this account's) is the service's answer; anything else may pass.
    const status = (error as { status?: number }).status;
    return reportOf(status === 400 || status === 404 ? 'mismatch' : 'verify-unavailable', { error });
  }
  if (AGREEING_STATUSES[event.event].includes(ctx.record.status)) return undefined;
  const error = new Error(
    `[@payhook/core] the service says ${event.reference} is ${ctx.record.status}, which does not agree with ${event.event}; its handlers did not run.`,
  );
  return reportOf('mismatch', { error });
}
