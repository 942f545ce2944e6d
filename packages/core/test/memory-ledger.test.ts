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
    expect(() => memoryStore({ ledger: { maxEntries: 0 } })).toThrow(/\[@payhook\/core\] memoryStore: ledger.maxEntries must be a positive whole number/);
    expect(() => memoryStore({ ledger: { retentionMs: -1 } })).toThrow(/ledger.retentionMs/);
    expect(() => memoryStore({ ledger: { body: 'all' as never } })).toThrow(/ledger.body must be 'keep' or 'hash'/);
  });
});
