/**
 * The load run behind load.test.ts: a seeded plan of 10,000 signed deliveries (7,000 events and
 * 3,000 copies), sent over real HTTP to one or two receivers with at most 32 requests in flight,
 * and what each answer was, for comparing with the ledger.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, type LedgerEntry, type LedgerQuery, type LogLevel, type Receiver, type Store } from '@payhook/core';
import type { Ledger } from '@payhook/core/store';
import { toNodeListener } from '@payhook/core/node';
import { createEvent, seededRandom, signedBody, type SignedBody } from '@payhook/testing';
import { until } from '@payhook/test-support/wait';

export const SECRET = 'whsec_ledger_load';
export const EVENTS = 7_000;
export const TOGETHER = 1_000; // copies sent at the same moment as their original (to the other receiver)
export const LATER = 2_000; // copies sent after their original's answer, as the service's retries are
export const DELIVERIES = EVENTS + TOGETHER + LATER;
export const FAIL_MESSAGE = 'load: the first run of this event fails';
const IN_FLIGHT = 32;

interface PlannedEvent {
  reference: string;
  event: object;
  signed: SignedBody;
  /** Ms the handler waits before finishing, so that copies find the event running. */
  slowMs: number;
  /** The handler throws a plain Error on its first run (answered 500, claim released). */
  failFirst: boolean;
}
/** One step of the run: a delivery, or an original and its copy sent at once. */
interface Item {
  ev: number;
  to: number;
  together: boolean;
}
export interface Answer {
  reference: string;
  status: number;
  outcome: string;
}

/** The same plan for a seed: which events are slow, which fail once, which get copies, in what order. */
export function plan(seed: number, tag: string) {
  const random = seededRandom(seed);
  const pick = (n: number) => Math.floor(random() * n);
  const shuffle = <T>(list: T[]) => {
    for (let i = list.length - 1; i > 0; i--) {
      const j = pick(i + 1);
      [list[i], list[j]] = [list[j]!, list[i]!];
    }
    return list;
  };
  const order = shuffle(Array.from({ length: EVENTS }, (_, i) => i));
  const together = new Set(order.slice(0, TOGETHER));
  const later = new Set(order.slice(TOGETHER, TOGETHER + LATER));
  const events: PlannedEvent[] = Array.from({ length: EVENTS }, (_, i) => {
    const reference = `ref_${tag}_${String(i).padStart(5, '0')}`;
    const event = createEvent('payment.success', { reference, merchantReference: `order-${tag}-${i}` });
    const slowMs = random() < 1 / 20 ? 30 + pick(51) : 0;
    // Only events with a later copy fail once, so that every event is processed in the end whatever
    // a copy that finds its event running answers (it waits, or answers 409).
    const failFirst = later.has(i) && random() < 0.15;
    return { reference, event, signed: signedBody(event, { secret: SECRET }), slowMs, failFirst };
  });
  const items: Item[] = [];
  for (let ev = 0; ev < EVENTS; ev++) {
    items.push({ ev, to: pick(2), together: together.has(ev) });
    if (later.has(ev)) items.push({ ev, to: pick(2), together: false });
  }
  return { events, items: shuffle(items) };
}
export type Plan = ReturnType<typeof plan>;

/** What the receivers of one run share: completed runs per reference, the events that failed once, unexpected warnings and errors. */
export const runState = () => ({ runs: new Map<string, number>(), failed: new Set<string>(), problems: [] as string[], running: 0 });
export type RunState = ReturnType<typeof runState>;

/** A receiver on `store` with the run's handler; two receivers of one run share `state`, as two processes share a database. */
export function loadReceiver(store: Store, p: Plan, state: RunState): Receiver {
  const byRef = new Map(p.events.map((e) => [e.reference, e]));
  const { runs, failed, problems } = state;
  const logger = (level: LogLevel, fields: object, message: string) => {
    if (level !== 'warn' && level !== 'error') return;
    const f = fields as { outcome?: string; err?: unknown };
    if (f.outcome === 'failed' && f.err instanceof Error && f.err.message === FAIL_MESSAGE) return;
    problems.push(`${level}: ${message}`);
  };
  // LEDGER_LOAD_ON_IN_PROGRESS=retry measures the copies' 409s without the wait (BENCHMARKS.md, issue 18).
  const onInProgress = process.env.LEDGER_LOAD_ON_IN_PROGRESS === 'retry' ? 'retry' : 'wait';
  return createReceiver({ secret: SECRET, store: watchClaims(store, state), logger, onInProgress }).on('payment.success', async (event) => {
    const planned = byRef.get(event.reference)!;
    if (planned.slowMs > 0) await new Promise((r) => setTimeout(r, planned.slowMs));
    if (planned.failFirst && !failed.has(event.reference)) {
      failed.add(event.reference);
      throw new Error(FAIL_MESSAGE);
    }
    runs.set(event.reference, (runs.get(event.reference) ?? 0) + 1);
  });
}

/**
 * `store` with its claims watched: `state.running` counts the claims that found the event running
 * in another delivery. Also wraps the synchronous ops a store may offer under a symbol (memoryStore).
 */
export function watchClaims<S extends object>(store: S, state: RunState): S {
  const seen = (c: { status: string }) => void (c.status === 'in-progress' && state.running++);
  // An empty target: a Proxy on the store itself would have to return its read-only symbol as it is.
  const wrap = <T extends object>(target: T): T =>
    new Proxy({} as T, {
      has: (_, prop) => prop in target,
      get(_, prop) {
        const v: unknown = Reflect.get(target, prop, target);
        if (typeof v === 'object' && v !== null && typeof prop === 'symbol' && 'claim' in v) return wrap(v);
        if (typeof v !== 'function') return v;
        if (prop !== 'claim') return v.bind(target);
        return (...args: unknown[]) => {
          const r = v.apply(target, args) as { status: string } | Promise<{ status: string }>;
          if (r instanceof Promise) void r.then(seen, () => {});
          else seen(r);
          return r;
        };
      },
    });
  return wrap(store);
}

/** Serve each receiver on 127.0.0.1, port 0; returns their URLs and a close. */
export async function serve(receivers: Receiver[]) {
  const servers: Server[] = [];
  const urls: string[] = [];
  for (const receiver of receivers) {
    const server = createServer(toNodeListener(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`);
  }
  const close = () => Promise.all(servers.map((s) => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve())))));
  return { urls, close };
}

/** At most `n` requests at once. */
function gate(n: number) {
  let free = n;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    while (free === 0) await new Promise<void>((r) => waiting.push(r));
    free--;
    try {
      return await fn();
    } finally {
      free++;
      waiting.shift()?.();
    }
  };
}

/**
 * Send the plan: every POST is one attempt (no retry on non-2xx). A later copy waits for the
 * answer to its event's earlier delivery; an item sent `together` goes to both receivers at once.
 */
export async function deliverAll(p: Plan, urls: string[]): Promise<Answer[]> {
  const answers: Answer[] = [];
  const limit = gate(IN_FLIGHT);
  const previous = new Map<number, Promise<unknown>>();
  const post = (ev: number, to: number) =>
    limit(async () => {
      const { reference, signed } = p.events[ev]!;
      const response = await fetch(urls[to % urls.length]!, { method: 'POST', headers: signed.headers, body: signed.body as string });
      const { outcome } = (await response.json()) as { outcome: string };
      answers.push({ reference, status: response.status, outcome });
    });
  let next = 0;
  const worker = async () => {
    while (next < p.items.length) {
      const { ev, to, together } = p.items[next++]!;
      const before = previous.get(ev);
      const sent = (async () => {
        await before;
        await (together ? Promise.all([post(ev, to), post(ev, to + 1)]) : post(ev, to));
      })();
      previous.set(ev, sent);
      await sent;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return answers;
}

/** Every record answering `query`, newest first, paging by the last id. */
export async function listAll(ledger: Ledger, query: LedgerQuery = {}): Promise<LedgerEntry[]> {
  const all: LedgerEntry[] = [];
  for (;;) {
    const page = await ledger.list({ ...query, limit: 1000, ...(all.length > 0 && { before: all[all.length - 1]!.id }) });
    all.push(...page);
    if (page.length < 1000) return all;
  }
}

/** Poll until the ledger holds `count` records (or more), for at most `ms`; the records as last read. */
export async function caughtUp(ledger: Ledger, count: number, ms: number): Promise<LedgerEntry[]> {
  let all: LedgerEntry[] = [];
  // The caller reports a shortfall with the records it gets: no throw.
  await until(async () => (all = await listAll(ledger)).length >= count, {
    timeoutMs: ms,
    intervalMs: 25,
    what: `${count} ledger records`,
  }).catch(() => {});
  return all;
}

/** `status outcome` per attempt, sorted, by reference. */
export function attemptsByRef(rows: { reference?: string; status: number; outcome: string }[]): Map<string, string[]> {
  const by = new Map<string, string[]>();
  for (const r of rows) {
    const key = r.reference ?? '(none)';
    by.set(key, [...(by.get(key) ?? []), `${r.status} ${r.outcome}`]);
  }
  for (const list of by.values()) list.sort();
  return by;
}
