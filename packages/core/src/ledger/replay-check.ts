import type { TransactionRecord } from '../protocol/api-schema.js';
import type { HandlerContext } from '../contracts/handling.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { isPaymentEventName } from '../protocol/payment-lifecycle.js';
import { checkRecord } from '../steps/record-check.js';
import type { RecordClient } from '../contracts/handling.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import { eventFromRecord } from '../protocol/record-event.js';

const NAME = '[@payhook/core]';
/** What names the event and its money: a stored event must carry the service's own. */
const SAME = ['mode', 'reference', 'merchantReference', 'amount', 'currency'] as const;

/** The service's version of a stored event and its record, or the report that says why nothing runs. */
export type Reread = { event: PaymentEvent; record: TransactionRecord } | DeliveryReport;

/**
 * A stored event whose signature was never checked (a reconcile recovered it), read again from
 * the service before a replay runs it: the ledger is only as trustworthy as whoever can write to
 * the store. The service's record must agree with the event (its status, as for `{ verify: true }`
 * handlers, and the same mode, reference, merchant reference, amount and currency); the event then
 * runs as the service's record makes it (`eventFromRecord`), never as it was stored.
 */
export async function rereadEvent(client: RecordClient | undefined, stored: PaymentEvent, id: string): Promise<Reread> {
  const names = { reference: stored.reference, event: stored.event, source: 'replay' as const };
  const refuse = (outcome: 'mismatch' | 'verify-unavailable', why: string, cause?: unknown) =>
    reportOf(outcome, { ...names, error: new Error(`${NAME} delivery ${id} was not replayed: ${why}; nothing ran.`, { cause }) });
  if (!client) {
    return refuse(
      'verify-unavailable',
      'it is an event a reconcile recovered, whose signature was never checked, so a replay reads it again from the service first, and this receiver has no client. Configure one, createReceiver({ client: createClient({ apiKey, baseUrl }) }), and replay again',
    );
  }
  if (!isPaymentEventName(stored.event))
    return refuse('mismatch', `it holds the event ${JSON.stringify(stored.event)}, which the service does not define`);
  const ctx = {} as HandlerContext;
  const refused = await checkRecord(client, stored, ctx);
  if (refused) {
    const error = refused.error as { message?: string } | undefined;
    const why =
      refused.outcome === 'mismatch' ? 'the service does not back it' : 'the service could not be asked for its record (try again later)';
    return refuse(refused.outcome as 'mismatch' | 'verify-unavailable', `${why} (${error?.message ?? refused.outcome})`, refused.error);
  }
  let event: PaymentEvent;
  try {
    event = eventFromRecord(ctx.record!, stored.event, stored.mode);
  } catch (error) {
    return refuse('mismatch', (error as Error).message, error);
  }
  const differ = SAME.filter((k) => event[k] !== stored[k]);
  if (differ.length > 0) {
    const what = differ.map((k) => `${k} ${JSON.stringify(stored[k])} stored, ${JSON.stringify(event[k])} at the service`).join('; ');
    return refuse(
      'mismatch',
      `it does not agree with the service's record of ${JSON.stringify(stored.reference)} (${what}). The ledger record was changed after it was written: check who can write to the store`,
    );
  }
  return { event, record: ctx.record! };
}
