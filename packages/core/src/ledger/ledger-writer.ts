import type { Trace } from '../contracts/delivery.js';
import { TAKES_BYTES, type Ledger, type LedgerEntry, type LedgerPatch } from '../storage/ledger.js';
import { errorMessage } from '../base/errors.js';
import { entryOf, refused, withBody } from './ledger-record.js';
import type { Log } from '../base/logger.js';
import { perMinute, REFUSALS_PER_MINUTE } from '../base/per-minute.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import { deadLetterReason } from '../protocol/outcomes.js';

export interface LedgerWriter {
  /** Record an answered delivery. Never throws, never waits. */
  answered(trace: Trace, r: DeliveryReport): void;
  /** Record what a delivery answered 202 came to. */
  late(r: DeliveryReport): void;
  /** Resolves once everything recorded so far is written (or given up on). */
  idle(): Promise<void>;
}

interface Pending {
  trace: Trace;
  r: DeliveryReport;
}

/** Records per append, at most: a full batch is written without waiting for the next turn. */
const BATCH = 256;
/** Records per append when the ledger fell behind. */
const MAX_BATCH = 1000;
/** Past this many records waiting for a ledger that fell behind, new ones are dropped and counted. */
const MAX_PENDING = 10_000;
/** Records refused one after another, each on its own, after which the store is taken for down. */
const DOWN_AFTER = 3;

/**
 * Writes the ledger off the delivery's path: records wait in a list and go to the ledger in one
 * `append` per batch, after the answer; while a write is in flight, the next batch gathers. A
 * ledger that fails or falls behind costs records, logged, never a delivery; a record the store
 * refuses costs only itself (the batch is written again one record at a time). Refusals, which
 * anyone can send, are recorded at most REFUSALS_PER_MINUTE a minute.
 */
export function createLedgerWriter(ledger: Ledger, log: Log, now: () => number): LedgerWriter {
  let entries: Pending[] = [];
  let patches: { id: string; patch: LedgerPatch }[] = [];
  let dropped = 0;
  let flushing: Promise<void> | undefined;

  let timer: ReturnType<typeof setTimeout> | undefined;
  let done: (() => void) | undefined;
  // Records gather until the next turn of the event loop (a real-time timer, not the receiver's
  // clock: it only batches), or until a batch is full; one flush runs at a time.
  const start = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const resolve = done;
    void flush().then(resolve);
  };
  const schedule = () => {
    if (flushing !== undefined && timer === undefined) return;
    if (flushing === undefined) flushing = new Promise<void>((resolve) => (done = resolve));
    if (entries.length >= BATCH) start();
    else timer ??= setTimeout(start, 0);
  };
  async function flush(): Promise<void> {
    while (entries.length > 0 || patches.length > 0) {
      const batch = entries.length > MAX_BATCH ? entries.splice(0, MAX_BATCH) : entries;
      if (batch === entries) entries = [];
      // Late outcomes wait until their records are written.
      const updates = entries.length === 0 ? patches : [];
      if (updates === patches) patches = [];
      if (batch.length > 0) await write(await Promise.all(batch.map(record)));
      try {
        // Each record has at most one patch here (its late outcome), so they go together.
        if (updates.length > 0) await Promise.all(updates.map(({ id, patch }) => ledger.update(id, patch)));
      } catch (error) {
        lost(updates.length, error);
      }
      if (dropped > 0) {
        log.write(
          'warn',
          { dropped },
          `[@payhook/core] the ledger fell ${MAX_PENDING} records behind and dropped ${dropped}; the store is too slow for this load.`,
        );
        dropped = 0;
      }
    }
    flushing = undefined;
  }
  /** One append for the batch; if the store refuses it, one per record, so one bad record costs only itself. */
  async function write(records: LedgerEntry[]): Promise<void> {
    try {
      await ledger.append(records);
      return;
    } catch (error) {
      if (records.length === 1) return lost(1, error);
    }
    let refusedCount = 0;
    let inARow = 0;
    let reason: unknown;
    for (let i = 0; i < records.length; i++) {
      try {
        await ledger.append([records[i]!]);
        inARow = 0;
      } catch (error) {
        reason = error;
        refusedCount += 1;
        inARow += 1;
        // Refused one after another: the store is down, not the records bad; the rest are not tried.
        if (inARow === DOWN_AFTER || refusedCount === records.length) {
          if (refusedCount > inARow) refusedLog(refusedCount - inARow, records.length, reason);
          return lost(inARow + records.length - i - 1, error);
        }
      }
    }
    if (refusedCount > 0) refusedLog(refusedCount, records.length, reason);
  }
  const lost = (count: number, error: unknown) =>
    log.write(
      'error',
      { err: error, records: count },
      `[@payhook/core] the ledger could not record ${count} deliveries; they are missing from it (the deliveries themselves were answered as usual). Check the store's connection.`,
    );
  const refusedLog = (count: number, of: number, error: unknown) =>
    log.write(
      'error',
      { err: error, records: count },
      `[@payhook/core] the ledger refused ${count} of ${of} records written together (${errorMessage(error)}); they are missing from it, the others were written. The deliveries were answered as usual; the reason says what the store would not take.`,
    );

  const bytes = TAKES_BYTES.has(ledger);
  const record = ({ trace, r }: Pending) => withBody(entryOf(trace, r, now), trace.body, ledger.body, bytes);
  const full = () => entries.length + patches.length >= MAX_PENDING && ++dropped > 0;
  // Refusals past this minute's share are not recorded; a minute that skipped some says so once.
  const shareLeft = perMinute(REFUSALS_PER_MINUTE, now, (skipped, since) =>
    log.write(
      'warn',
      { skipped },
      `[@payhook/core] ${skipped} refused deliveries (unsigned or unreadable requests) were not recorded in the ledger in the minute from ${new Date(since).toISOString()}: it records at most ${REFUSALS_PER_MINUTE} a minute, so that a flood of them costs the store nothing. They were answered as usual.`,
    ),
  );

  return {
    answered(trace, r) {
      if ((refused(trace) && !shareLeft()) || full()) return;
      entries.push({ trace, r });
      schedule();
    },
    late(r) {
      if (r.deliveryId === undefined || full()) return;
      const late = { outcome: r.outcome, durationMs: r.durationMs ?? 0, ...(r.error !== undefined && { error: errorMessage(r.error) }) };
      const reason = deadLetterReason(r.outcome, 'late');
      patches.push({ id: r.deliveryId, patch: { late, ...(reason && { deadLetter: { reason, at: now() } }) } });
      schedule();
    },
    idle: () => flushing ?? Promise.resolve(),
  };
}
