import { sign, type PaymentEvent, type PaymentEventName } from '@payhook/core';

let seq = 0;

/** A valid payload of section 2.1; each call gets a new reference unless one is given. */
export function makeEvent<E extends PaymentEventName = 'payment.success'>(
  overrides: Partial<Omit<PaymentEvent, 'event'>> & { event?: E } = {},
): PaymentEvent<E> {
  seq += 1;
  return {
    event: 'payment.success',
    mode: 'sandbox',
    reference: `txn_test_${process.pid}_${Date.now().toString(36)}_${seq}`,
    merchantReference: `order-${seq}`,
    amount: '1500.00',
    serviceFee: '45.00',
    currency: 'ETB',
    status: 'completed',
    paymentMethod: 'telebirr',
    customer: { name: 'Abebe Kebede', email: 'abebe@example.com', phone: '251911234567' },
    paidAt: '2026-11-20T09:15:02.123Z',
    createdAt: '2026-11-20T09:14:10.004Z',
    ...overrides,
  } as PaymentEvent<E>;
}

/** The bytes and headers of a signed delivery, as the service sends it. */
export function signed(event: unknown, secret: string) {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  return { body, headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, secret) } };
}

/** A signed web `Request` for `receiver.handle`. */
export function signedRequest(event: unknown, secret: string, url = 'http://127.0.0.1/webhooks'): Request {
  const { body, headers } = signed(event, secret);
  return new Request(url, { method: 'POST', body, headers });
}
