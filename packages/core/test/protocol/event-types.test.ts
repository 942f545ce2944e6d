import { describe, expect, expectTypeOf, it } from 'vitest';
import { createEvent } from '@payhook/testing';
import { createEventRouter, type PaymentEvent } from '../../src/index.js';
import { EVENT_NAMES, paymentEventSchema } from '../../src/lifecycle.js';

describe('event types and schema', () => {
  it('narrows the handler event by name (checked by tsc in `pnpm test`)', () => {
    createEventRouter()
      .on('payment.success', (event) => {
        expectTypeOf(event.event).toEqualTypeOf<'payment.success'>();
        expectTypeOf(event.amount).toEqualTypeOf<string>();
      })
      .on(['payment.refunded', 'payment.reversed'], (event) => {
        expectTypeOf(event.event).toEqualTypeOf<'payment.refunded' | 'payment.reversed'>();
      });
    expectTypeOf<PaymentEvent<'payment.failed'>['event']>().toEqualTypeOf<'payment.failed'>();
    expect(EVENT_NAMES).toHaveLength(6);
  });

  it('accepts every event of section 6 and a null paidAt, and keeps unknown fields', () => {
    for (const event of EVENT_NAMES) {
      expect(paymentEventSchema.safeParse(createEvent(event)).success).toBe(true);
    }
    const parsed = paymentEventSchema.parse({ ...createEvent('payment.success', { paidAt: null }), extra: { a: 1 } });
    expect(parsed.extra).toEqual({ a: 1 });
  });

  it.each([
    ['mode', { mode: 'test' }],
    ['amount', { amount: '1,500.00' }],
    ['serviceFee', { serviceFee: '1.5' }],
    ['currency', { currency: 'etb' }],
    ['createdAt', { createdAt: '2026-11-20 09:14' }],
    ['reference', { reference: '' }],
  ])('rejects a bad %s', (_, bad) => {
    expect(paymentEventSchema.safeParse({ ...createEvent('payment.success'), ...bad }).success).toBe(false);
  });
});
