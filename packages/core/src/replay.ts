import type { Awaitable } from './maybe-async.js';
import type { PaymentEvent } from './event-schema.js';
import { bytesOf, type Ledger, type LedgerEntry } from './ledger.js';
import type { LedgerWriter, Trace } from './pipeline/ledger-writer.js';
import type { RawDelivery } from './pipeline/intake.js';
import type { DeliveryReport, ReceiverResult } from './pipeline/outcome.js';
import { Malformed, parseEvent } from './pipeline/parse.js';

export interface ReplayOptions {
  /** Run a done event's handlers again, under a key of this replay's own. Recorded as `forced`. */
  force?: boolean;
}

/** What a replay needs of its receiver: the signed pipeline, the unsigned run, and a new record. */
export interface ReplaySteps {
  signed(delivery: RawDelivery, trace: Trace): Awaitable<ReceiverResult>;
  unsigned(event: PaymentEvent, trace: Trace): Awaitable<ReceiverResult>;
  trace(replayOf: string, forced: boolean): Trace;
}

const NAME = '[@payhook/core]';

/** Replay from the ledger: a webhook's stored bytes and signature, or a reconciled event's JSON. */
export function createReplay(ledger: Ledger, writer: LedgerWriter, steps: ReplaySteps) {
  return {
    async replay(id: string, options: ReplayOptions = {}): Promise<DeliveryReport> {
      const entry = await ledger.get(id);
      if (entry === undefined) {
        throw new Error(`${NAME} no delivery ${JSON.stringify(id)} in the ledger: it was never recorded, or is past the ledger's bounds. List the recorded ones with \`payhook deliveries list\`.`);
      }
      const bytes = bytesOf(entry);
      if (bytes === undefined) {
        throw new Error(`${NAME} delivery ${id} was recorded without its body (ledger body: 'hash'), so it cannot be replayed. Keep bodies (ledger: { body: 'keep' }) to replay deliveries.`);
      }
      const trace = steps.trace(id, options.force === true);
      const result = await (entry.signature === 'not-checked' ? steps.unsigned(eventOf(entry, bytes), trace) : steps.signed(deliveryOf(entry, bytes), trace));
      await writer.idle();
      return result.report;
    },
  };
}

function deliveryOf(entry: LedgerEntry, body: NonNullable<ReturnType<typeof bytesOf>>): RawDelivery {
  // No signature stored: the replay answers 401, as the delivery did.
  return { method: 'POST', signature: entry.signatureHeader, body };
}

/** A reconciled event was stored as the JSON the receiver dispatched; it was never signed. */
function eventOf(entry: LedgerEntry, body: NonNullable<ReturnType<typeof bytesOf>>): PaymentEvent {
  const event = parseEvent(body);
  if (event instanceof Malformed) throw new Error(`${NAME} delivery ${entry.id} holds no event payhook can read; it cannot be replayed.`, { cause: event.error });
  return event;
}
