import { TAKES_BYTES, textOf, type DeadLetter, type Ledger, type LedgerEntry, type LedgerPatch, type LedgerSource } from '../ledger.js';
import type { Log } from '../logger.js';
import type { RawBody } from '../signature.js';
import type { DeliveryReport } from './outcome.js';


/** What the receiver knows of a delivery beyond its report: set as the pipeline goes, read once it is answered. */
export interface Trace {
  id: string;
  receivedAt: number;
  source: LedgerSource;
  body?: RawBody;
  signatureHeader?: unknown;
  /** Set once the signature was checked: true when a secret matched. */
  verified?: boolean;
  replayOf?: string;
  forced?: boolean;
}

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

/**
 * Writes the ledger off the delivery's path: records wait in a list and go to the ledger in one
 * `append` per batch, after the answer; while a write is in flight, the next batch gathers. A
 * ledger that fails or falls behind costs records, logged, never a delivery.
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
      try {
        if (batch.length > 0) await ledger.append(ledger.body === 'hash' ? await Promise.all(batch.map(hashed)) : batch.map(kept));
        // Each record has at most one patch here (its late outcome), so they go together.
        if (updates.length > 0) await Promise.all(updates.map(({ id, patch }) => ledger.update(id, patch)));
      } catch (error) {
        log.write('error', { err: error, records: batch.length + updates.length }, `[@payhook/core] the ledger could not record ${batch.length + updates.length} deliveries; they are missing from it (the deliveries themselves were answered as usual). Check the store's connection.`);
      }
      if (dropped > 0) {
        log.write('warn', { dropped }, `[@payhook/core] the ledger fell ${MAX_PENDING} records behind and dropped ${dropped}; the store is too slow for this load.`);
        dropped = 0;
      }
    }
    flushing = undefined;
  }
  const bytes = TAKES_BYTES.has(ledger);
  const kept = ({ trace, r }: Pending): LedgerEntry => {
    const e = entryOf(trace, r, now);
    if (trace.body === undefined) return e;
    if (bytes) e.raw = trace.body;
    else {
      const text = textOf(trace.body);
      e.body = text.body;
      e.bodyEncoding = text.bodyEncoding;
    }
    return e;
  };
  const hashed = async ({ trace, r }: Pending): Promise<LedgerEntry> => {
    const e = entryOf(trace, r, now);
    if (trace.body !== undefined) e.bodySha256 = await sha256(trace.body);
    return e;
  };
  const full = () => entries.length + patches.length >= MAX_PENDING && ++dropped > 0;

  return {
    answered(trace, r) {
      if (full()) return;
      entries.push({ trace, r });
      schedule();
    },
    late(r) {
      if (r.deliveryId === undefined || full()) return;
      const late = { outcome: r.outcome, durationMs: r.durationMs ?? 0, ...(r.error !== undefined && { error: messageOf(r.error) }) };
      const reason = r.outcome === 'failed' ? 'late-failed' : r.outcome === 'rejected' ? 'rejected' : undefined;
      patches.push({ id: r.deliveryId, patch: { late, ...(reason && { deadLetter: { reason, at: now() } }) } });
      schedule();
    },
    idle: () => flushing ?? Promise.resolve(),
  };
}

/** Why a delivery goes to the dead letters at its answer, if it does. */
function deadLetterOf(r: DeliveryReport, source: LedgerSource): DeadLetter['reason'] | undefined {
  if (r.outcome === 'rejected') return 'rejected';
  if (source === 'reconcile' && r.outcome === 'failed') return 'reconcile-failed';
  return undefined;
}

/**
 * The record, every field in one literal (absent ones undefined, which JSON leaves out), so that
 * all records share one shape. `raw` is for a ledger that takes the bytes (TAKES_BYTES).
 */
function entryOf(trace: Trace, r: DeliveryReport, now: () => number): LedgerEntry & { raw?: RawBody } {
  // A refused or unreadable delivery still names its reference, so a query for it finds why (unverified: see `signature`).
  const names = r.reference === undefined && trace.body !== undefined ? namesIn(trace.body) : r;
  const reason = deadLetterOf(r, trace.source);
  return {
    id: trace.id,
    receivedAt: trace.receivedAt,
    source: trace.source,
    reference: names.reference,
    event: names.event,
    dedupeKey: r.dedupeKey,
    outcome: r.outcome,
    status: r.status,
    durationMs: r.durationMs ?? 0,
    attempt: r.attempt,
    signature: trace.verified === undefined ? 'not-checked' : trace.verified ? 'valid' : 'invalid',
    secretIndex: r.secretIndex,
    signatureHeader: typeof trace.signatureHeader === 'string' ? trace.signatureHeader : undefined,
    body: undefined,
    bodyEncoding: undefined,
    bodySha256: undefined,
    raw: undefined,
    error: r.error === undefined ? undefined : messageOf(r.error),
    deadLetter: reason === undefined ? undefined : { reason, at: now() },
    replayOf: trace.replayOf,
    forced: trace.replayOf === undefined ? undefined : trace.forced === true,
  };
}

function namesIn(body: RawBody): Pick<LedgerEntry, 'reference' | 'event'> {
  try {
    const value: unknown = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
    if (typeof value !== 'object' || value === null) return {};
    const { reference, event } = value as Record<string, unknown>;
    return { ...(typeof reference === 'string' && { reference }), ...(typeof event === 'string' && { event }) };
  } catch {
    return {};
  }
}

async function sha256(body: RawBody): Promise<string> {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
