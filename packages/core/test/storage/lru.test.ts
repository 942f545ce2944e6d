import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Lru } from '../../src/base/lru.js';
import type { LedgerEntry } from '../../src/storage/ledger.js';
import { isMemoryLedger } from '../../src/storage/memory-ledger.js';
import { memoryStore } from '../../src/storage/memory-store.js';

type Op =
  | { op: 'get'; key: string }
  | { op: 'peek'; key: string }
  | { op: 'delete'; key: string }
  | { op: 'set'; key: string; value: number };

// Few keys, so that sequences hit, miss, refresh and evict all the time.
const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g');
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constantFrom('get' as const, 'peek' as const, 'delete' as const), key }),
  fc.record({ op: fc.constant('set' as const), key, value: fc.integer() }),
);

/** The plain model: entries oldest first; what each operation answers, and what a `set` evicts. */
function modelStep(entries: [string, number][], o: Op, max: number): { answer: unknown; evicted: string[] } {
  const at = entries.findIndex(([k]) => k === o.key);
  if (o.op === 'peek') return { answer: at < 0 ? undefined : entries[at]![1], evicted: [] };
  if (o.op === 'get') {
    if (at < 0) return { answer: undefined, evicted: [] };
    const [entry] = entries.splice(at, 1);
    entries.push(entry!);
    return { answer: entry![1], evicted: [] };
  }
  if (o.op === 'delete') {
    if (at >= 0) entries.splice(at, 1);
    return { answer: at >= 0, evicted: [] };
  }
  if (at >= 0) entries.splice(at, 1);
  entries.push([o.key, o.value]);
  const evicted = entries.length > max ? entries.splice(0, entries.length - max).map(([k]) => k) : [];
  return { answer: undefined, evicted };
}

describe('Lru', () => {
  it('answers as a list kept in recency order: same values, same victims, never more than max', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(op, { maxLength: 200 }), (max, ops) => {
        const lru = new Lru<string, number>(max);
        const model: [string, number][] = [];
        for (const o of ops) {
          const before = new Set(model.map(([k]) => k));
          const { answer, evicted } = modelStep(model, o, max);
          const got = o.op === 'set' ? void lru.set(o.key, o.value) : lru[o.op](o.key);
          expect(got).toEqual(answer);
          expect(lru.size).toBe(model.length);
          expect(lru.size).toBeLessThanOrEqual(max);
          // The victims are gone, everything else is held with its value (peek leaves the order alone).
          for (const k of evicted) expect(lru.peek(k)).toBeUndefined();
          for (const k of before) if (!evicted.includes(k) && k !== o.key) expect(lru.peek(k)).toBe(model.find(([m]) => m === k)![1]);
        }
        // The whole order, oldest first, read off as new keys push the held ones out one by one.
        const order: string[] = [];
        for (const probe of ['p1', 'p2', 'p3', 'p4', 'p5']) {
          const held = model.map(([k]) => k).filter((k) => lru.peek(k) !== undefined);
          lru.set(probe, 0);
          order.push(...held.filter((k) => lru.peek(k) === undefined));
        }
        expect(order).toEqual(model.map(([k]) => k));
      }),
      { numRuns: 1000 },
    );
  });

  it('get makes a key the newest and peek does not', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1).set('b', 2);
    expect(lru.peek('a')).toBe(1);
    lru.set('c', 3);
    expect([lru.peek('a'), lru.peek('b'), lru.peek('c')]).toEqual([undefined, 2, 3]);
    expect(lru.get('b')).toBe(2);
    lru.set('d', 4);
    expect([lru.peek('b'), lru.peek('c'), lru.peek('d')]).toEqual([2, undefined, 4]);
  });

  it('setting a held key replaces its value, makes it the newest and evicts nothing', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1).set('b', 2).set('a', 10);
    expect(lru.size).toBe(2);
    lru.set('c', 3);
    expect([lru.peek('a'), lru.peek('b'), lru.peek('c')]).toEqual([10, undefined, 3]);
  });
});

describe("memoryStore's max", () => {
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s at creation, saying what to set', (max) => {
    expect(() => memoryStore({ max, warn: false })).toThrow(
      /^\[@payhook\/core\] memoryStore: max must be a positive whole number; got .+\. Leave it unset/,
    );
  });

  it('keeps at most max keys, evicting the one claimed least recently', async () => {
    let t = 1_000;
    const store = memoryStore({ max: 2, now: () => t, warn: false });
    await store.claim('a', 30_000);
    await store.claim('b', 30_000);
    // Looking at `a` (get) does not refresh it; claiming `a` again would.
    await store.get('a');
    t += 1;
    await store.claim('c', 30_000);
    expect(await store.get('a')).toBeUndefined();
    expect((await store.get('b'))?.state).toBe('claimed');
    expect((await store.get('c'))?.state).toBe('claimed');
  });
});

describe("memoryStore's ledger, its code loaded on first use", () => {
  const entry = (id: string, receivedAt: number) => ({
    id,
    receivedAt,
    source: 'webhook' as const,
    outcome: 'processed' as const,
    status: 200,
    durationMs: 1,
    signature: 'valid' as const,
  });

  it('runs the calls made while it loads in the order they were made, then the later ones after them', async () => {
    const t = Date.now();
    const ledger = memoryStore({ ledger: true, warn: false }).ledger!;
    const calls = [
      ledger.append([entry('a', t), entry('b', t + 1)]),
      ledger.get('a'),
      ledger.remove(['a']),
      ledger.list(),
      ledger.append([entry('c', t + 2)]),
      ledger.update('c', { late: { outcome: 'processed', durationMs: 5 } }),
      ledger.get('c'),
    ];
    const [, a, removed, listed, , , c] = await Promise.all(calls);
    expect((a as LedgerEntry | undefined)?.id).toBe('a');
    expect(removed).toBe(1);
    expect((listed as LedgerEntry[]).map((e) => e.id)).toEqual(['b']);
    expect((c as LedgerEntry | undefined)?.late?.durationMs).toBe(5);
    // Loaded: later calls answer from the same records.
    expect((await ledger.list()).map((e) => e.id)).toEqual(['c', 'b']);
    expect(ledger.failedDoneTtlMs).toBeGreaterThan(30 * 24 * 60 * 60 * 1000);
  });

  it('is still told apart as a memory ledger before anything loaded it', () => {
    expect(isMemoryLedger(memoryStore({ ledger: true, warn: false }).ledger!)).toBe(true);
  });
});
