import { isOpenDeadLetter, matchesQuery, pageSize, TAKES_BYTES, textOf, type Ledger, type LedgerEntry, type ledgerSettings } from './ledger.js';
import type { RawBody } from './signature.js';

const NAME = '[@payhook/core]';

type Stored = LedgerEntry & { raw?: RawBody };
const out = ({ raw, ...e }: Stored): LedgerEntry => (raw === undefined ? e : { ...e, ...textOf(raw) });
const newestFirst = (a: Stored, b: Stored) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * The memory store's ledger: one process's deliveries in an array, in the order they were
 * written, which is id order while the clock only moves forward (then lookups halve the array and
 * a page stops at its limit; otherwise they scan). Bounded by count and age from the front; open
 * dead letters that fall past a bound move aside rather than out. For tests, a single process,
 * and a dashboard route in the app; a CLI in another process cannot read it.
 */
export function memoryLedger(settings: ReturnType<typeof ledgerSettings>, now: () => number): Ledger {
  const { maxEntries, retentionMs } = settings;
  let records: (Stored | undefined)[] = [];
  let head = 0;
  let sorted = true;
  // Open dead letters past a bound: kept until a retry answers them.
  const kept = new Map<string, Stored>();

  const live = (e: Stored, t: number) => e.receivedAt >= t - retentionMs || isOpenDeadLetter(e);
  const trim = () => {
    const oldest = now() - retentionMs;
    while (head < records.length) {
      const e = records[head]!;
      if (records.length - head <= maxEntries && e.receivedAt >= oldest) break;
      if (isOpenDeadLetter(e)) kept.set(e.id, e);
      records[head++] = undefined;
    }
    // Drop the emptied front now and then, not on every trim.
    if (head > 1024 && head * 2 > records.length) {
      records = records.slice(head);
      head = 0;
    }
  };
  const find = (id: string): Stored | undefined => {
    if (sorted) {
      let lo = head;
      let hi = records.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const e = records[mid]!;
        if (e.id === id) return e;
        if (e.id < id) lo = mid + 1;
        else hi = mid - 1;
      }
    } else {
      for (let i = head; i < records.length; i++) if (records[i]!.id === id) return records[i];
    }
    return kept.get(id);
  };

  const ledger: Ledger = {
    body: settings.body,
    async append(batch) {
      // The writer hands over records it made for this call: kept as they are, copied on the way out.
      for (const e of batch) {
        const last = records[records.length - 1];
        if (last !== undefined && last.id > e.id) sorted = false;
        records.push(e);
      }
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
      // Newest first: from the end; in id order the page is complete once it is full.
      for (let i = records.length - 1; i >= head && !(sorted && found.length >= limit); i--) {
        const e = records[i]!;
        if (live(e, t) && matchesQuery(e, query)) found.push(e);
      }
      for (const e of kept.values()) if (live(e, t) && matchesQuery(e, query)) found.push(e);
      return found.sort(newestFirst).slice(0, limit).map(out);
    },
  };
  TAKES_BYTES.add(ledger);
  return ledger;
}
