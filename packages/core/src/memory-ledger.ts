import { isOpenDeadLetter, matchesQuery, pageSize, type Ledger, type LedgerEntry, type ledgerSettings } from './ledger.js';

const NAME = '[@payhook/core]';

/**
 * The memory store's ledger: one process's deliveries, in insertion order (which is id order,
 * ids being made from the receiver's clock), bounded by count and age. Open dead letters that
 * fall past a bound move aside rather than out. For tests, a single process, and a dashboard route
 * in the app; a CLI in another process cannot read it.
 */
export function memoryLedger(settings: ReturnType<typeof ledgerSettings>, now: () => number): Ledger {
  const { maxEntries, retentionMs } = settings;
  const entries = new Map<string, LedgerEntry>();
  // Open dead letters past a bound: kept until a retry answers them.
  const kept = new Map<string, LedgerEntry>();

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

  return {
    body: settings.body,
    async append(batch) {
      for (const e of batch) entries.set(e.id, { ...e });
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
      return e !== undefined && live(e, now()) ? { ...e } : undefined;
    },
    async list(query = {}) {
      const limit = pageSize(query, NAME);
      const t = now();
      const found: LedgerEntry[] = [];
      for (const e of [...entries.values(), ...kept.values()]) if (live(e, t) && matchesQuery(e, query)) found.push(e);
      found.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      return found.slice(0, limit).map((e) => ({ ...e }));
    },
  };
}
