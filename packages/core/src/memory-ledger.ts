import { isOpenDeadLetter, matchesQuery, pageSize, type Ledger, type LedgerEntry, type ledgerSettings } from './ledger.js';
import { textOf } from './pipeline/ledger-writer.js';
import type { RawBody } from './signature.js';

/**
 * Ledgers that take a record's body as the request's bytes (`raw`) and make the text only when it
 * is read: a memory ledger holds thousands of records, and bytes off the JS heap cost the garbage
 * collector nothing, where a copy as a string is moved at every collection.
 */
export const TAKES_BYTES = new WeakSet<Ledger>();
type Stored = LedgerEntry & { raw?: RawBody };
const out = ({ raw, ...e }: Stored): LedgerEntry => (raw === undefined ? e : { ...e, ...textOf(raw) });

const NAME = '[@payhook/core]';

/**
 * The memory store's ledger: one process's deliveries, in insertion order (which is id order,
 * ids being made from the receiver's clock), bounded by count and age. Open dead letters that
 * fall past a bound move aside rather than out. For tests, a single process, and a dashboard route
 * in the app; a CLI in another process cannot read it.
 */
export function memoryLedger(settings: ReturnType<typeof ledgerSettings>, now: () => number): Ledger {
  const { maxEntries, retentionMs } = settings;
  const entries = new Map<string, Stored>();
  // Open dead letters past a bound: kept until a retry answers them.
  const kept = new Map<string, Stored>();

  const live = (e: LedgerEntry, t: number) => e.receivedAt >= t - retentionMs || isOpenDeadLetter(e);
  const trim = () => {
    const oldest = now() - retentionMs;
    for (const [id, e] of entries) {
      if (entries.size <= maxEntries && e.receivedAt >= oldest) break;
      entries.delete(id);
      if (isOpenDeadLetter(e)) kept.set(id, e);
    }
  };
  const find = (id: string) => entries.get(id) ?? kept.get(id);

  const ledger: Ledger = {
    body: settings.body,
    async append(batch) {
      // The writer hands over records it made for this call: kept as they are, copied on the way out.
      for (const e of batch) entries.set(e.id, e);
      trim();
    },
    async update(id, patch) {
      const e = find(id);
      if (e === undefined) return;
      Object.assign(e, patch);
      if (kept.has(id) && !isOpenDeadLetter(e)) kept.delete(id);
    },
    async get(id) {
      const e = find(id);
      return e !== undefined && live(e, now()) ? out(e) : undefined;
    },
    async list(query = {}) {
      const limit = pageSize(query, NAME);
      const t = now();
      const found: Stored[] = [];
      for (const e of [...entries.values(), ...kept.values()]) if (live(e, t) && matchesQuery(e, query)) found.push(e);
      found.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      return found.slice(0, limit).map(out);
    },
  };
  TAKES_BYTES.add(ledger);
  return ledger;
}
