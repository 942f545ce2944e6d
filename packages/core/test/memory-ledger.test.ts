import { memoryStore } from '@payhook/core';
import { ledgerConformance } from '@payhook/testing/ledger';
import { describe, expect, it } from 'vitest';

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
