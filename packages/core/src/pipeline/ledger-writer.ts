import type { DeadLetter, Ledger, LedgerEntry, LedgerPatch, LedgerSource } from '../ledger.js';
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

/** Past this many records waiting for a ledger that fell behind, new ones are dropped and counted. */
const MAX_PENDING = 10_000;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Writes the ledger off the delivery's path: records wait in a list and go to the ledger in one
 * `append` per batch, after the answer; while a write is in flight, the next batch gathers. A
 * ledger that fails or falls behind costs records, logged, never a delivery.
 */
export function createLedgerWriter(ledger: Ledger, log: Log, now: () => number): LedgerWriter {
  let entries: { trace: Trace; r: DeliveryReport }[] = [];
  let patches: { id: string; patch: LedgerPatch }[] = [];
  let dropped = 0;
  let flushing: Promise<void> | undefined;

  const schedule = () => {
    flushing ??= Promise.resolve().then(flush);
  };
  async function flush(): Promise<void> {
    while (entries.length > 0 || patches.length > 0) {
      const batch = entries;
      const updates = patches;
      entries = [];
      patches = [];
      try {
        if (batch.length > 0) await ledger.append(await Promise.all(batch.map(({ trace, r }) => entryOf(trace, r, ledger, now))));
        for (const { id, patch } of updates) await ledger.update(id, patch);
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

async function entryOf(trace: Trace, r: DeliveryReport, ledger: Ledger, now: () => number): Promise<LedgerEntry> {
  const e: LedgerEntry = {
    id: trace.id,
    receivedAt: trace.receivedAt,
    source: trace.source,
    outcome: r.outcome,
    status: r.status,
    durationMs: r.durationMs ?? 0,
    signature: trace.verified === undefined ? 'not-checked' : trace.verified ? 'valid' : 'invalid',
  };
  if (r.reference !== undefined) e.reference = r.reference;
  if (r.event !== undefined) e.event = r.event;
  if (r.dedupeKey !== undefined) e.dedupeKey = r.dedupeKey;
  if (r.attempt !== undefined) e.attempt = r.attempt;
  if (r.secretIndex !== undefined) e.secretIndex = r.secretIndex;
  if (typeof trace.signatureHeader === 'string') e.signatureHeader = trace.signatureHeader;
  if (trace.body !== undefined) {
    if (ledger.body === 'hash') e.bodySha256 = await sha256(trace.body);
    else Object.assign(e, textOf(trace.body));
  }
  // A refused or unreadable delivery still names its reference, so a query for it finds why (unverified: see `signature`).
  if (e.reference === undefined && trace.body !== undefined) Object.assign(e, namesIn(trace.body));
  if (r.error !== undefined) e.error = messageOf(r.error);
  const reason = deadLetterOf(r, trace.source);
  if (reason !== undefined) e.deadLetter = { reason, at: now() };
  if (trace.replayOf !== undefined) {
    e.replayOf = trace.replayOf;
    e.forced = trace.forced === true;
  }
  return e;
}

/** The body as the ledger keeps it: UTF-8 text when it is (a webhook's JSON always is), else base64. */
function textOf(body: RawBody): Pick<LedgerEntry, 'body' | 'bodyEncoding'> {
  if (typeof body === 'string') return { body, bodyEncoding: 'utf8' };
  try {
    return { body: utf8.decode(body), bodyEncoding: 'utf8' };
  } catch {
    let binary = '';
    for (let i = 0; i < body.length; i += 0x8000) binary += String.fromCharCode(...body.subarray(i, i + 0x8000));
    return { body: btoa(binary), bodyEncoding: 'base64' };
  }
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

/** The stored body back as the bytes that were signed. */
export function bytesOf(e: Pick<LedgerEntry, 'body' | 'bodyEncoding'>): RawBody | undefined {
  if (e.body === undefined) return undefined;
  if (e.bodyEncoding !== 'base64') return e.body;
  return Uint8Array.from(atob(e.body), (c) => c.charCodeAt(0));
}

async function sha256(body: RawBody): Promise<string> {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
