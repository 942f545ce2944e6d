import { systemClock, type Clock } from '../base/clock.js';
import { Lru } from '../base/lru.js';
import { STORE_SYNC } from '../base/shared-keys.js';
import { failedDoneTtl, ledgerSettings, TAKES_BYTES, type Ledger, type LedgerOptions } from './ledger.js';
import { markMemoryLedger } from './memory-ledger-mark.js';
import { markMemoryStore } from './memory-store-warning.js';
import { keyWatches } from './key-watches.js';
import {
  SHORTEST_RETENTION_MS,
  type ClaimResult,
  type CompleteOptions,
  type Outcome,
  type Store,
  type StoreOps,
  type StoreRecord,
} from './store-contract.js';

/** What `memoryStore` takes; every field has a default. */
export interface MemoryStoreOptions {
  /** Most keys kept; the least recently used go first. Default 100,000. */
  max?: number;
  /** How long done records are kept. Default 24 hours: longer than any retry schedule, short enough for one process. */
  retentionMs?: number;
  /** Clock, for tests (a `Clock`'s `now`). Default `Date.now`, or `clock.now`. */
  now?: () => number;
  /** @internal Time and timers, for tests: the ledger's trim runs on its timers. Default the real, unref'd ones. */
  clock?: Clock;
  /**
   * Keep a ledger of every delivery (`store.ledger`), in this process's memory: `true`, or bounds
   * and the body mode. Default off. At most 10,000 records and 1,000 refusals unless `maxEntries` and `maxRefusals` say otherwise.
   */
  ledger?: LedgerOptions | true;
  /**
   * Warn (once per process, through the receiver's logger) when a receiver or worker uses this
   * store where it cannot deduplicate: on a serverless platform, or beside another copy of
   * @payhook/core in the same process (Next's App Router and Pages Router, `next dev` reloads).
   * Default `true`; `false` when you know one process's memory is enough (a demo, one-off scripts).
   */
  warn?: boolean;
}

/** One shape for every state, changed in place: a done record reuses its claim's entry. */
interface Entry {
  state: 'claimed' | 'released' | 'done';
  attempt: number;
  /** The claim's token; kept once done, so that completing twice with it is not an error. */
  token: string;
  /** Past this, the entry is as good as absent: the end of a lease, or of a record's retention. */
  until: number;
  outcome: Outcome;
  completedAt: number;
}

/**
 * The default store: one process, bounded by an LRU. Use a shared store (Redis, Postgres)
 * when more than one process receives deliveries.
 *
 * @example
 * const receiver = createReceiver({ secret, store: memoryStore({ max: 50_000 }) });
 */
export function memoryStore(options: MemoryStoreOptions = {}): Store {
  const retentionMs = options.retentionMs ?? SHORTEST_RETENTION_MS;
  const clock = options.clock ?? systemClock;
  const now = options.now ?? (options.clock ? clock.now : Date.now);
  const max = options.max ?? 100_000;
  if (!(Number.isInteger(max) && max > 0)) {
    throw new RangeError(`[@payhook/core] memoryStore: max must be a positive whole number; got ${max}. Leave it unset for 100,000.`);
  }
  const cache = new Lru<string, Entry>(max);
  // Copies waiting for a running key, told when it is completed or released.
  const watches = keyWatches();
  // Unique per claim: a random prefix per store and a counter, cheaper than a UUID per claim.
  let tokenPrefix: string | undefined;
  let claims = 0;

  // Only claim moves a key in the LRU order; the rest look without touching it (peek).
  const held = (key: string, token: string, t: number) => {
    const e = cache.peek(key);
    return e !== undefined && e.state === 'claimed' && e.token === token && e.until > t ? e : undefined;
  };

  const ops = {
    claim(key: string, leaseMs: number): ClaimResult {
      const t = now();
      const e = cache.get(key);
      if (e !== undefined && e.until > t) {
        if (e.state === 'done') return { status: 'done', outcome: e.outcome, completedAt: e.completedAt };
        if (e.state === 'claimed') return { status: 'in-progress', leaseExpiresAt: e.until };
      }
      // Made on first use: a Worker forbids random values at module scope, where receivers are often created.
      tokenPrefix ??= `${crypto.randomUUID()}:`;
      const token = tokenPrefix + (++claims).toString(36);
      // A released or expired claim keeps its attempt count: the next run is a redelivery.
      const attempt = e !== undefined && e.state !== 'done' ? e.attempt + 1 : 1;
      if (e !== undefined && e.state !== 'done') {
        e.state = 'claimed';
        e.attempt = attempt;
        e.token = token;
        e.until = t + leaseMs;
      } else cache.set(key, { state: 'claimed', attempt, token, until: t + leaseMs, outcome: 'ok', completedAt: 0 });
      return { status: 'claimed', token, attempt };
    },
    complete(key: string, token: string, opts: CompleteOptions = {}): boolean {
      const t = now();
      const e = held(key, token, t);
      // Completing twice with the same token is not an error: a retried complete must not look like a lost claim.
      if (!e) {
        const done = cache.peek(key);
        return done !== undefined && done.state === 'done' && done.token === token && done.until > t;
      }
      e.state = 'done';
      // `failed`, the earlier name, from a caller not yet updated, is `rejected`.
      e.outcome = opts.outcome === undefined || opts.outcome === 'ok' ? 'ok' : 'rejected';
      e.completedAt = t;
      e.until = t + (opts.ttlMs ?? retentionMs);
      if (watches.size > 0) watches.changed(key);
      return true;
    },
    release(key: string, token: string): boolean {
      const t = now();
      const e = held(key, token, t);
      if (!e) return false;
      e.state = 'released';
      e.until = t + retentionMs;
      if (watches.size > 0) watches.changed(key);
      return true;
    },
    extend(key: string, token: string, leaseMs: number): boolean {
      const t = now();
      const e = held(key, token, t);
      if (!e) return false;
      e.until = t + leaseMs;
      return true;
    },
    get(key: string): StoreRecord | undefined {
      const t = now();
      const e = cache.peek(key);
      if (!e) return undefined;
      if (e.state === 'done') {
        return e.until > t ? { state: 'done', attempt: e.attempt, outcome: e.outcome, completedAt: e.completedAt } : undefined;
      }
      if (e.state === 'claimed' && e.until > t) return { state: 'claimed', attempt: e.attempt, leaseExpiresAt: e.until };
      return { state: 'released', attempt: e.attempt };
    },
  } satisfies StoreOps & { get(key: string): StoreRecord | undefined };

  const store: Store = {
    claim: async (key, leaseMs) => ops.claim(key, leaseMs),
    complete: async (key, token, opts) => ops.complete(key, token, opts),
    release: async (key, token) => ops.release(key, token),
    extend: async (key, token, leaseMs) => ops.extend(key, token, leaseMs),
    get: async (key) => ops.get(key),
    watch: async (key) => watches.watch(key),
    retentionMs,
    ...(options.ledger && {
      ledger: lazyLedger(ledgerSettings(options.ledger, '[@payhook/core] memoryStore:', 10_000, 1_000), now, clock, retentionMs),
    }),
  };
  // Not enumerable: a wrapper built with `{ ...store, claim }` must not inherit the unwrapped view.
  Object.defineProperty(store, STORE_SYNC, { value: ops });
  markMemoryStore(store, options.warn !== false);
  return store;
}

/**
 * The memory ledger, its module loaded on the first call: a plain receiver, which keeps no ledger,
 * never loads it (in Node, a chunk of its own; a Worker's bundler inlines it, so there only its
 * evaluation waits). The options are checked now, by the caller; calls made while it loads run once
 * it has, in the order they were made, and later ones straight through.
 */
function lazyLedger(settings: ReturnType<typeof ledgerSettings>, now: () => number, clock: Clock, storeRetentionMs: number): Ledger {
  let real: Ledger | undefined;
  let waiting: { go: () => void; fail: (error: unknown) => void }[] | undefined;
  const load = (calls: NonNullable<typeof waiting>) =>
    import('./memory-ledger.js').then(
      ({ memoryLedger }) => {
        real = memoryLedger(settings, now, { clock, storeRetentionMs });
        // In one turn: no call made meanwhile can overtake those that waited.
        for (const call of calls) call.go();
      },
      (error: unknown) => {
        // Not loaded (a broken install): these calls fail, the next one tries again.
        waiting = undefined;
        for (const call of calls) call.fail(error);
      },
    );
  const later = <T>(run: (l: Ledger) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (waiting === undefined) void load((waiting = []));
      waiting.push({ go: () => run(real!).then(resolve, reject), fail: reject });
    });
  const ledger: Ledger = {
    body: settings.body,
    failedDoneTtlMs: failedDoneTtl(storeRetentionMs, settings),
    append: (entries) => (real ? real.append(entries) : later((l) => l.append(entries))),
    update: (id, patch) => (real ? real.update(id, patch) : later((l) => l.update(id, patch))),
    get: (id) => (real ? real.get(id) : later((l) => l.get(id))),
    list: (query) => (real ? real.list(query) : later((l) => l.list(query))),
    remove: (ids) => (real ? real.remove(ids) : later((l) => l.remove(ids))),
  };
  // What the real one is: a ledger given the raw bytes, and a memory ledger.
  TAKES_BYTES.add(ledger);
  markMemoryLedger(ledger);
  return ledger;
}
