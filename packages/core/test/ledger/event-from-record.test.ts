import { createReceiver, createReconciler, memoryStore, type PaymentEvent } from '@payhook/core';
import { eventFromRecord } from '@payhook/core/lifecycle';
import { transactionRecordSchema, type TransactionRecord } from '@payhook/core/api';
import { describe, expect, it } from 'vitest';

const quiet = { info() {}, warn() {}, error() {} };
/** A list row as the SDKs record it: what every event needs, the rest left out. */
const sparse = transactionRecordSchema.parse({
  reference: 'P1',
  merchantReference: 'order_1',
  status: 'completed',
  amount: '10.00',
  currencyCode: 'ETB',
  createdAt: '2026-08-13T11:30:00.000Z',
});

describe('eventFromRecord', () => {
  it('maps currencyCode to currency and fills what the record leaves out with null', () => {
    expect(eventFromRecord(sparse, 'payment.success', 'live')).toEqual({
      event: 'payment.success',
      mode: 'live',
      reference: 'P1',
      merchantReference: 'order_1',
      amount: '10.00',
      serviceFee: null,
      currency: 'ETB',
      status: 'completed',
      paymentMethod: null,
      customer: { name: null, email: null, phone: null },
      paidAt: null,
      createdAt: '2026-08-13T11:30:00.000Z',
    });
  });

  it("keeps the record's own mode and customer, and leaves out what a webhook does not carry", () => {
    const record = transactionRecordSchema.parse({
      ...sparse,
      mode: 'sandbox',
      customer: { name: 'Abebe Bikila', email: null, phone: '251911234567' },
      checkoutUrl: 'https://pay.example/P1',
    });
    const event = eventFromRecord(record, 'payment.refunded', 'live');
    expect(event).toMatchObject({ mode: 'sandbox', customer: { name: 'Abebe Bikila', email: null, phone: '251911234567' } });
    expect(event).not.toHaveProperty('checkoutUrl');
    expect(event).not.toHaveProperty('currencyCode');
  });

  it('sets paidAt on a success only, as the service sends its webhooks', () => {
    const paid = transactionRecordSchema.parse({ ...sparse, status: 'refunded', paidAt: '2026-08-13T11:31:00.000Z' });
    expect(eventFromRecord(paid, 'payment.success', 'live').paidAt).toBe('2026-08-13T11:31:00.000Z');
    for (const name of ['payment.refunding', 'payment.refunded'] as const) expect(eventFromRecord(paid, name, 'live').paidAt).toBeNull();
  });

  it('refuses a record without the merchantReference or currencyCode every event carries, naming it', () => {
    const { merchantReference: _m, ...noOrder } = sparse;
    expect(() => eventFromRecord(transactionRecordSchema.parse(noOrder), 'payment.success', 'live')).toThrow(/P1 has no merchantReference/);
    expect(() => eventFromRecord({ ...sparse, currencyCode: null }, 'payment.success', 'live')).toThrow(/P1 has no currencyCode/);
  });

  it('says what to pass when neither the record nor the caller gives a mode', () => {
    expect(() => eventFromRecord(sparse, 'payment.success')).toThrow(
      /^\[@payhook\/core\] eventFromRecord: the record of P1 has no mode; pass the mode/,
    );
  });
});

describe('a reconcile run over records without a mode', () => {
  it("dispatches under the client's mode, so the dedupe key is the one the webhook used", async () => {
    const receiver = createReceiver({ secret: 'whsec_x', store: memoryStore(), logger: quiet });
    const seen: PaymentEvent[] = [];
    receiver.onAny((event) => void seen.push(event));
    const client = {
      mode: 'live' as const,
      transactions: {
        async *listAll(): AsyncIterable<TransactionRecord> {
          yield sparse;
        },
      },
    };
    // The webhook already ran it: the run must see the same key and leave it alone.
    await receiver.dispatch(eventFromRecord(sparse, 'payment.success', 'live'), { source: 'webhook' });
    const run = await createReconciler({ client, receiver }).run({ from: '2026-08-01', to: '2026-08-31' });
    expect(run).toMatchObject({ scanned: 1, recovered: [], failed: [] });
    expect(seen).toHaveLength(1);
    expect(await receiver.store.get('live:P1:payment.success')).toMatchObject({ state: 'done' });

    const sandbox = createReceiver({ secret: 'whsec_x', store: memoryStore(), logger: quiet }).onAny(() => {});
    const recovered = await createReconciler({ client: { ...client, mode: 'sandbox' }, receiver: sandbox }).run({
      from: '2026-08-01',
      to: '2026-08-31',
    });
    expect(recovered.recovered.map((r) => r.reference)).toEqual(['P1']);
    expect(await sandbox.store.get('sandbox:P1:payment.success')).toMatchObject({ state: 'done' });
  });
});
