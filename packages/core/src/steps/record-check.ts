import type { RecordClient } from '../contracts/handling.js';
import type { TransactionRecord } from '../protocol/api-schema.js';
import type { HandlerContext } from '../contracts/handling.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { standing } from '../protocol/payment-lifecycle.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport } from '../contracts/delivery.js';

/**
 * The record check, for handlers registered with `{ verify: true }`: put the service's own record
 * on `ctx`, or return the report that says why the handlers must not run (the record disagrees:
 * `mismatch`; the service could not be asked: `verify-unavailable`).
 */
export async function checkRecord(
  client: RecordClient | undefined,
  event: PaymentEvent,
  ctx: HandlerContext,
): Promise<DeliveryReport | undefined> {
  try {
    // Only with `accounts` can there be none: an account whose settings gave no client (a 503 until they do).
    const { transactions } = client ?? noClient(ctx.account);
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
    // A client of the merchant's own may reject with anything, undefined too: that is the service not answering.
    const status = (error as { status?: number } | null | undefined)?.status;
    return reportOf(status === 400 || status === 404 ? 'mismatch' : 'verify-unavailable', { error });
  }
  return judgeRecord(event, ctx.record);
}

/**
 * Whether the service's record backs a signed event: it must be the same transaction in the same
 * mode (a record of another one is never acted on: 503, the service asks again later), and its
 * status must agree with the event. A status the event moves further is the API behind its own
 * webhook: 503 too, so the service's retry finds it caught up; never a 200 that drops the event.
 * Only a status no move leads from to the event is a `mismatch`.
 */
export function judgeRecord(event: PaymentEvent, record: TransactionRecord): DeliveryReport | undefined {
  const fail = (outcome: 'mismatch' | 'verify-unavailable', why: string) =>
    reportOf(outcome, { error: new Error(`[@payhook/core] ${why}; its handlers did not run.`) });
  if (record.reference !== event.reference || (record.mode !== undefined && record.mode !== event.mode)) {
    return fail(
      'verify-unavailable',
      `asked for ${event.reference} (${event.mode}), the service answered the record of ${String(record.reference)} (${String(record.mode)}), which is not acted on; answered 503 so that the service retries`,
    );
  }
  const stand = standing(event.event, record.status);
  if (stand === 'agrees') return undefined;
  if (stand === 'behind')
    return fail(
      'verify-unavailable',
      `the service's record of ${event.reference} still says ${record.status}, behind the ${event.event} it sent; answered 503 so that the service retries once its record caught up`,
    );
  return fail('mismatch', `the service says ${event.reference} is ${record.status}, which does not agree with ${event.event}`);
}

function noClient(account: string | undefined): never {
  throw new Error(
    `[@payhook/core] a handler asked for the service's record ({ verify: true }), but neither account ${account}'s settings from accounts.resolve nor the receiver have a client: return { secret, client: createClient({ apiKey }) } for it.`,
  );
}
