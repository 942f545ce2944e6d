import { memoryStore, type LedgerEntry } from '@payhook/core';
import { manualClock } from '@payhook/testing';
import { ledgerConformance } from '@payhook/testing/ledger';
import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/store.js';
import { isMemoryLedger } from '../../src/storage/memory-ledger.js';

ledgerConformance('memory', { make: async (bounds) => ({ ledger: memoryStore({ ledger: bounds }).ledger! }) });

describe('memory ledger', () => {
  it('is off unless asked for', () => {
    expect(memoryStore().ledger).toBeUndefined();
    expect(memoryStore({ ledger: true }).ledger?.body).toBe('keep');
  });

  it('refuses bounds it cannot keep, naming the option', () => {
    expect(() => memoryStore({ ledger: { maxEntries: 0 } })).toThrow(
      /\[@payhook\/core\] memoryStore: ledger.maxEntries must be a positive whole number/,
    );
    expect(() => memoryStore({ ledger: { retentionMs: -1 } })).toThrow(/ledger.retentionMs/);
    expect(() => memoryStore({ ledger: { body: 'all' as never } })).toThrow(/ledger.body must be 'keep' or 'hash'/);
    expect(() => memoryStore({ ledger: { maxRefusals: 1.5 } })).toThrow(
      /\[@payhook\/core\] memoryStore: ledger.maxRefusals must be a positive whole number; got 1.5. Leave it unset for 1000/,
    );
    expect(() => memoryStore({ ledger: { deadLetterRetentionMs: 0 } })).toThrow(
      /ledger.deadLetterRetentionMs must be a positive number of milliseconds; got 0. Leave it unset for 30 days/,
    );
  });
});

describe('memory ledger out of id order', () => {
  it('still finds and lists every record when a clock moved back (ids no longer in write order)', async () => {
    const ledger = memoryStore({ ledger: true }).ledger!;
    const t = Date.now();
    const entry = (id: string) => ({
      id,
      receivedAt: t,
      source: 'webhook' as const,
      outcome: 'processed' as const,
      status: 200,
      durationMs: 1,
      signature: 'valid' as const,
      reference: 'R',
    });
    await ledger.append([entry('b'), entry('c')]);
    await ledger.append([entry('a')]);
    expect((await ledger.get('a'))?.id).toBe('a');
    expect((await ledger.get('c'))?.id).toBe('c');
    expect((await ledger.list({ reference: 'R', limit: 2 })).map((e) => e.id)).toEqual(['c', 'b']);
  });
});

/*
 * The memory ledger's own bounds, exactly (the conformance suite allows any ledger a batch of lag):
 * on a manual clock shared with its store, records written by hand with the ids and times given.
 */
const T0 = 1_700_000_000_000;
const MINUTE = 60_000;
const record = (id: string, receivedAt: number, extra: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id,
  receivedAt,
  source: 'webhook',
  outcome: 'processed',
  status: 200,
  durationMs: 1,
  signature: 'valid',
  reference: 'R',
  ...extra,
});
const dead = (id: string, receivedAt: number) =>
  record(id, receivedAt, { outcome: 'rejected', deadLetter: { reason: 'rejected', at: receivedAt } });
const refusal = (id: string, receivedAt: number) => record(id, receivedAt, { outcome: 'unauthorized', status: 401, signature: 'invalid' });
const ids = async (ledger: Ledger, query = {}) => (await ledger.list({ limit: 1000, ...query })).map((e) => e.id);

function bounded(bounds: NonNullable<Parameters<typeof memoryStore>[0]>['ledger'] = true) {
  const clock = manualClock(T0);
  return { clock, ledger: memoryStore({ clock, ledger: bounds, warn: false }).ledger! };
}

describe('memory ledger bounds, exactly', () => {
  it('is told apart by the symbol every copy of core shares (how the payhook command refuses it)', () => {
    const { ledger } = bounded();
    expect(isMemoryLedger(ledger)).toBe(true);
    expect((ledger as unknown as Record<symbol, unknown>)[Symbol.for('payhook.memoryLedger')]).toBe(true);
    expect(Object.keys(ledger)).not.toContain(Symbol.for('payhook.memoryLedger'));
    expect(isMemoryLedger({ ...ledger })).toBe(false);
  });

  it('finds each record, written in or against id order, alone or among others, and no record it does not hold', async () => {
    const { ledger } = bounded();
    await ledger.append([record('m', T0)]);
    expect((await ledger.get('m'))?.id).toBe('m');
    await ledger.append([record('c', T0), record('b', T0)]);
    await ledger.append([record('a', T0)]);
    for (const id of ['a', 'b', 'c', 'm']) expect((await ledger.get(id))?.id).toBe(id);
    expect(await ledger.get('n')).toBeUndefined();
    expect(await ledger.get('0')).toBeUndefined();
    expect(await ids(ledger)).toEqual(['m', 'c', 'b', 'a']);
    expect(await ledger.remove(['z', 'b'])).toBe(1);
    expect(await ids(ledger)).toEqual(['m', 'c', 'a']);
  });

  it('lists accepted records, refusals and dead letters kept aside as one list, newest first', async () => {
    const { ledger } = bounded({ maxEntries: 2 });
    await ledger.append([dead('a1', T0), refusal('b2', T0), record('c3', T0), refusal('d4', T0), record('e5', T0)]);
    // a1 is past maxEntries: kept aside as an open dead letter, and listed in its place.
    expect(await ids(ledger)).toEqual(['e5', 'd4', 'c3', 'b2', 'a1']);
    expect(await ids(ledger, { limit: 3 })).toEqual(['e5', 'd4', 'c3']);
  });

  it('keeps exactly maxEntries, and aside only open dead letters; a query, and closing one, apply to those aside', async () => {
    const { ledger } = bounded({ maxEntries: 2 });
    await ledger.append([dead('a', T0), record('b', T0), dead('c', T0), record('d', T0), record('e', T0)]);
    expect(await ids(ledger)).toEqual(['e', 'd', 'c', 'a']);
    expect(await ids(ledger, { reference: 'other' })).toEqual([]);
    expect(await ids(ledger, { deadLetters: 'open' })).toEqual(['c', 'a']);
    // A late outcome leaves a dead letter open: still kept. Its retry closes it: gone, as it is past the bound.
    await ledger.update('a', { late: { outcome: 'failed', durationMs: 5 } } as never);
    expect(await ids(ledger)).toEqual(['e', 'd', 'c', 'a']);
    await ledger.update('a', { deadLetter: { reason: 'rejected', at: T0, retriedBy: 'e' } });
    expect(await ids(ledger)).toEqual(['e', 'd', 'c']);
    expect(await ledger.get('a')).toBeUndefined();
  });

  it('keeps a record exactly at the edge of its retention, and an open dead letter exactly at the edge of its own', async () => {
    const { clock, ledger } = bounded({ maxEntries: 1, retentionMs: MINUTE, deadLetterRetentionMs: 5 * MINUTE });
    await ledger.append([record('a', T0 - MINUTE)]);
    expect((await ledger.get('a'))?.id).toBe('a');
    await ledger.append([dead('b', T0 - 5 * MINUTE), record('c', T0)]);
    expect(await ids(ledger)).toEqual(['c', 'b']);
    await clock.advance(1);
    expect(await ids(ledger)).toEqual(['c']);
  });

  it('trims on its own timer every retentionMs (at most a minute) while it holds anything, then stops', async () => {
    const { clock, ledger } = bounded({ retentionMs: 10_000 });
    expect(clock.pending()).toBe(0);
    await ledger.append([record('a', T0), refusal('b', T0)]);
    expect(clock.pending()).toBe(1);
    await ledger.append([record('c', T0)]);
    expect(clock.pending()).toBe(1);
    // remove() counts what memory still holds: at 10 s the records are at the edge, kept; at 20 s dropped.
    await clock.advance(20_000);
    expect(await ledger.remove(['a', 'b', 'c'])).toBe(0);
    expect(clock.pending()).toBe(0);
    // A long retention is trimmed every minute: a record is gone from memory within a minute past it.
    const long = bounded({ retentionMs: 10 * MINUTE });
    await long.ledger.append([record('x', T0)]);
    await long.clock.advance(11 * MINUTE);
    expect(await long.ledger.remove(['x'])).toBe(0);
  });

  it('keeps trimming while only a dead letter kept aside and a record are held, until their retentions end', async () => {
    const { clock, ledger } = bounded({ maxEntries: 1, retentionMs: MINUTE, deadLetterRetentionMs: 5 * MINUTE });
    await ledger.append([dead('a', T0)]);
    await ledger.append([record('b', T0)]);
    expect(await ids(ledger)).toEqual(['b', 'a']);
    await clock.advance(10 * MINUTE);
    expect(await ledger.remove(['a', 'b'])).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  it('drops the emptied front of a lane past 1024 records, and still finds and lists the rest', async () => {
    const { ledger } = bounded({ maxEntries: 10 });
    const all = Array.from({ length: 1_100 }, (_, i) => record(`r${String(i).padStart(5, '0')}`, T0));
    for (let i = 0; i < all.length; i += 100) await ledger.append(all.slice(i, i + 100));
    const newest = all.slice(-10).map((e) => e.id);
    expect(await ids(ledger)).toEqual([...newest].reverse());
    expect((await ledger.get(newest[0]!))?.id).toBe(newest[0]);
    expect(await ledger.get(all[0]!.id)).toBeUndefined();
  });

  it('refuses a record without an id, naming what a record needs', async () => {
    const { ledger } = bounded();
    for (const id of ['', 7]) {
      await expect(ledger.append([record(id as string, T0)])).rejects.toMatchObject({
        name: 'TypeError',
        message: expect.stringMatching(/needs an id and a receivedAt in epoch milliseconds/),
      });
    }
    expect(await ids(ledger)).toEqual([]);
  });
});
