import type { ReplayOptions } from '../contracts/receiving.js';
import type { TransactionRecord } from '../protocol/api-schema.js';
import type { Awaitable } from '../base/maybe-async.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { bytesOf, type Ledger, type LedgerEntry } from '../storage/ledger.js';
import type { LedgerWriter } from './ledger-writer.js';
import type { Trace } from '../contracts/delivery.js';
import type { RawDelivery } from '../contracts/delivery.js';
import { reportOf } from '../observing/outcome.js';
import type { DeliveryReport, ReceiverResult } from '../contracts/delivery.js';
import { Malformed, parseEvent } from '../steps/parse.js';
import type { RecordClient } from '../contracts/handling.js';
import { rereadEvent } from './replay-check.js';

/** What a replay needs of its receiver: the signed pipeline, the run of an event the service vouched for, a refusal, and a new record. */
export interface ReplaySteps {
  signed(delivery: RawDelivery, trace: Trace): Awaitable<ReceiverResult>;
  /** `event` as the service's `record` makes it; `record` is the handlers' `ctx.record`. */
  unsigned(event: PaymentEvent, trace: Trace, record: TransactionRecord): Awaitable<ReceiverResult>;
  /** A replay that runs nothing: reported, logged and recorded as the replay's answer. */
  refused(report: DeliveryReport, trace: Trace): Awaitable<ReceiverResult>;
  trace(replayOf: string, forced: boolean): Trace;
  /** The receiver's `client`, which reads a reconciled event again from the service. */
  readonly client?: RecordClient;
}

const NAME = '[@payhook/core]';

/**
 * Replay from the ledger, trusting none of it: a record is only what was written to the store.
 * A webhook whose signature was valid goes through the signed pipeline again, which checks the
 * HMAC on the stored bytes; an event a reconcile recovered (never signed) is read again from the
 * service and runs as the service's record says; a delivery that was refused (signature invalid,
 * or never checked) runs nothing.
 */
export function createReplay(ledger: Ledger, writer: LedgerWriter, steps: ReplaySteps) {
  async function run(entry: LedgerEntry, trace: Trace): Promise<ReceiverResult> {
    // An account's record replays as that account's: verified with its secrets, under its keys.
    trace.account = entry.account;
    const refusal = refusalOf(entry);
    if (refusal) return steps.refused(refusal, trace);
    const bytes = bytesOf(entry);
    if (bytes === undefined) {
      throw new Error(
        ledger.body === 'hash' || entry.bodySha256 !== undefined
          ? `${NAME} delivery ${entry.id} was recorded without its body (ledger body: 'hash'), so it cannot be replayed. Keep bodies (ledger: { body: 'keep' }) to replay deliveries.`
          : `${NAME} delivery ${entry.id} has no body to replay (a replay that ran nothing keeps none)${entry.replayOf ? `: replay ${entry.replayOf}, the delivery it replayed` : ''}.`,
      );
    }
    if (entry.signature === 'valid') return steps.signed(deliveryOf(entry, bytes), trace);
    const stored = await parseEvent(bytes);
    if (stored instanceof Malformed) {
      return steps.refused(
        reportOf('malformed', {
          ...namesOf(entry),
          error: new Error(`${NAME} delivery ${entry.id} holds no event payhook can read; it cannot be replayed, and nothing ran.`, {
            cause: stored.error,
          }),
        }),
        trace,
      );
    }
    const reread = await rereadEvent(steps.client, stored, entry.id);
    if ('outcome' in reread) return steps.refused(reread, trace);
    // The replay's own record keeps the service's version: a replay of it reads the service again.
    trace.body = JSON.stringify(reread.event);
    return steps.unsigned(reread.event, trace, reread.record);
  }
  return {
    async replay(id: string, options: ReplayOptions = {}): Promise<DeliveryReport> {
      const entry = await ledger.get(id);
      if (entry === undefined) throw noDelivery(id);
      const result = await run(entry, steps.trace(id, options.force === true));
      await writer.idle();
      return result.report;
    },
  };
}

/** A replay's answer for an id the ledger does not hold; the `payhook` command gives it for another account's id too. */
export const noDelivery = (id: string): Error =>
  new Error(
    `${NAME} no delivery ${JSON.stringify(id)} in the ledger: it was never recorded, or is past the ledger's bounds. List the recorded ones with \`payhook deliveries list\`.`,
  );

/**
 * Records that never run a handler: a delivery answered 401, and a webhook refused before its
 * signature was checked (only a reconcile's or a replay's event has no signature to check).
 */
function refusalOf(entry: LedgerEntry): DeliveryReport | undefined {
  const refused =
    entry.signature === 'invalid'
      ? 'its signature was invalid'
      : entry.signature === 'not-checked' && entry.source === 'webhook'
        ? 'it was refused before its signature was checked'
        : undefined;
  if (refused === undefined) return undefined;
  const error = new Error(
    `${NAME} delivery ${entry.id} was not replayed: ${refused} (answered ${entry.status} ${entry.outcome}), and a delivery payhook did not verify never runs a handler; nothing ran. If the secret was wrong then, the service's retries or a reconcile (createReconciler) bring the event.`,
  );
  return reportOf('unauthorized', { ...namesOf(entry), error });
}

const namesOf = (entry: LedgerEntry) => ({ reference: entry.reference, event: entry.event, source: 'replay' as const });

function deliveryOf(entry: LedgerEntry, body: NonNullable<ReturnType<typeof bytesOf>>): RawDelivery {
  // No signature stored: the replay answers 401, as the delivery did.
  return { method: 'POST', signature: entry.signatureHeader, body, account: entry.account };
}
