import type { Clock } from '../base/clock.js';
import {
  failedDoneTtl,
  isKept,
  isOpenDeadLetter,
  isRefusal,
  matchesQuery,
  pageSize,
  TAKES_BYTES,
  textOf,
  type Ledger,
  type LedgerEntry,
  type ledgerSettings,
} from './ledger.js';
import type { RawBody } from '../protocol/signature.js';
import { markMemoryLedger } from './memory-ledger-mark.js';

export { isMemoryLedger } from './memory-ledger-mark.js';

const NAME = '[@payhook/core]';
/** Longest wait between two trims of a ledger nobody writes to. */
const TRIM_EVERY_MS = 60_000;

type Stored = LedgerEntry & { raw?: RawBody };
const out = ({ raw, ...e }: Stored): LedgerEntry => (raw === undefined ? e : { ...e, ...textOf(raw) });
const newestFirst = (a: Stored, b: Stored) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * Records in the order they were written, which is id order while the clock only moves forward
 * (then lookups halve the array and a page stops at its limit; otherwise they scan), dropped from
 * the front.
 */
class Lane {
  records: (Stored | undefined)[] = [];
  head = 0;
  sorted = true;

  push(e: Stored) {
    const last = this.records[this.records.length - 1];
    if (last !== undefined && last.id > e.id) this.sorted = false;
    this.records.push(e);
  }
  /** Drop from the front what is past `max` or older than `oldest`; `aside` may keep what it is given. */
  trim(max: number, oldest: number, aside: (e: Stored) => void) {
    const { records } = this;
    while (this.head < records.length) {
      const e = records[this.head]!;
      if (records.length - this.head <= max && e.receivedAt >= oldest) break;
      aside(e);
      records[this.head++] = undefined;
    }
    // Drop the emptied front now and then, not on every trim.
    if (this.head > 1024 && this.head * 2 > records.length) {
      this.records = records.slice(this.head);
      this.head = 0;
    }
  }
  indexOf(id: string): number {
    const { records } = this;
    if (this.sorted) {
      let lo = this.head;
      let hi = records.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const e = records[mid]!;
        if (e.id === id) return mid;
        if (e.id < id) lo = mid + 1;
        else hi = mid - 1;
      }
      return -1;
    }
    for (let i = this.head; i < records.length; i++) if (records[i]!.id === id) return i;
    return -1;
  }
  /** Newest first, up to `limit` of those `pick` takes (in id order a page is complete once full). */
  newest(limit: number, pick: (e: Stored) => boolean, into: Stored[]) {
    let found = 0;
    for (let i = this.records.length - 1; i >= this.head && !(this.sorted && found >= limit); i--) {
      const e = this.records[i]!;
      if (pick(e)) (found += 1), into.push(e);
    }
  }
  get size() {
    return this.records.length - this.head;
  }
}

/**
 * The memory store's ledger: one process's deliveries, in two lanes bounded on their own, the
 * accepted records (`maxEntries`) and the refusals (`maxRefusals`), both by age too. Open dead
 * letters that fall past a bound move aside rather than out, until `deadLetterRetentionMs`. A
 * timer on `clock` (unref'd) trims while nobody writes, so nothing outlives its retention in memory.
 * For tests, a single process, and a dashboard route in the app; a CLI in another process cannot read it.
 */
export function memoryLedger(
  settings: ReturnType<typeof ledgerSettings>,
  now: () => number,
  { clock, storeRetentionMs }: { clock?: Clock; storeRetentionMs?: number } = {},
): Ledger {
  const { maxEntries, maxRefusals, retentionMs, deadLetterRetentionMs } = settings;
  const accepted = new Lane();
  const refusals = new Lane();
  // Open dead letters past a bound: kept until a retry answers them, or their own retention ends.
  const kept = new Map<string, Stored>();
  let timer: unknown;

  const live = (e: Stored, t: number) => isKept(e, t, settings);
  const trim = () => {
    const t = now();
    const deadOldest = t - deadLetterRetentionMs;
    accepted.trim(maxEntries, t - retentionMs, (e) => {
      if (isOpenDeadLetter(e) && e.receivedAt >= deadOldest) kept.set(e.id, e);
    });
    refusals.trim(maxRefusals, t - retentionMs, () => {});
    for (const [id, e] of kept) if (!(isOpenDeadLetter(e) && e.receivedAt >= deadOldest)) kept.delete(id);
  };
  // While anything is held, a trim every minute at most (or every retentionMs, when shorter).
  const tick = () => {
    timer = undefined;
    trim();
    arm();
  };
  const arm = () => {
    if (clock === undefined || timer !== undefined || accepted.size + refusals.size + kept.size === 0) return;
    timer = clock.setTimeout(tick, Math.min(retentionMs, TRIM_EVERY_MS));
  };
  const laneOf = (e: Stored) => (isRefusal(e) ? refusals : accepted);
  const find = (id: string): Stored | undefined => {
    for (const lane of [accepted, refusals]) {
      const i = lane.indexOf(id);
      if (i >= 0) return lane.records[i];
    }
    return kept.get(id);
  };

  const ledger: Ledger = {
    body: settings.body,
    ...(storeRetentionMs !== undefined && { failedDoneTtlMs: failedDoneTtl(storeRetentionMs, settings) }),
    async append(batch) {
      // All or nothing, as a store's single statement: every record is checked before any is kept.
      for (const e of batch) {
        if (typeof e.id !== 'string' || e.id === '' || !Number.isFinite(e.receivedAt)) {
          throw new TypeError(
            `${NAME} memoryStore: ledger record ${JSON.stringify(e.id)} has receivedAt ${e.receivedAt}; a record needs an id and a receivedAt in epoch milliseconds.`,
          );
        }
      }
      // The writer hands over records it made for this call: kept as they are, copied on the way out.
      for (const e of batch) laneOf(e).push(e);
      trim();
      arm();
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
      const pick = (e: Stored) => live(e, t) && matchesQuery(e, query);
      const found: Stored[] = [];
      accepted.newest(limit, pick, found);
      refusals.newest(limit, pick, found);
      for (const e of kept.values()) if (pick(e)) found.push(e);
      return found.sort(newestFirst).slice(0, limit).map(out);
    },
    async remove(ids) {
      let removed = 0;
      for (const id of new Set(ids)) {
        if (kept.delete(id)) removed += 1;
        for (const lane of [accepted, refusals]) {
          const i = lane.indexOf(id);
          if (i < 0) continue;
          lane.records.splice(i, 1);
          removed += 1;
        }
      }
      return removed;
    },
  };
  TAKES_BYTES.add(ledger);
  markMemoryLedger(ledger);
  return ledger;
}
