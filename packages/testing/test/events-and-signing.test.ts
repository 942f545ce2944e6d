import express from 'express';
import request from 'supertest';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createReceiver, verifySignature } from '@payhook/core';
import { EVENT_NAMES, paymentEventSchema } from '@payhook/core/lifecycle';
import { payhookExpress } from '@payhook/express';
import { createEvent, createEvents, signedBody, signedRequest, type EventOrBytes } from '@payhook/testing';

const secret = 'whsec_signing_tests';
const quiet = { info() {}, warn() {}, error() {} };

describe('createEvent', () => {
  it('makes a valid payload for every event, with a status and paidAt that fit it', () => {
    const expected = {
      'payment.success': ['completed', true],
      'payment.failed': ['failed', false],
      'payment.cancelled': ['cancelled', false],
      'payment.refunding': ['refunding', false],
      'payment.refunded': ['refunded', false],
      'payment.reversed': ['reversed', false],
    } as const;
    for (const name of EVENT_NAMES) {
      const event = createEvent(name);
      expect(paymentEventSchema.safeParse(event).success).toBe(true);
      expect(event.event).toBe(name);
      expect(event.status).toBe(expected[name][0]);
      expect(event.paidAt !== null).toBe(expected[name][1]);
      expect(event.reference).toMatch(/^ref_[A-Za-z0-9_-]{16}$/);
      if (event.paidAt) expect(Date.parse(event.paidAt)).toBeGreaterThan(Date.parse(event.createdAt));
    }
    expect(createEvent('payment.success').reference).not.toBe(createEvent('payment.success').reference);
  });

  it('takes overrides, computes the service fee from the amount, and keeps extra fields', () => {
    const event = createEvent('payment.success', { amount: '200.00', customer: { name: 'Hana' }, mode: 'live', note: 'extra' });
    expect(event).toMatchObject({ amount: '200.00', serviceFee: '7.00', mode: 'live', note: 'extra' });
    expect(event.customer).toEqual({ name: 'Hana', email: 'abebe@example.com', phone: '251911234567' });
    expect(createEvent('payment.success', { amount: '0.10' }).serviceFee).toBe('0.00');
    expect(createEvent('payment.success', { amount: '0.15' }).serviceFee).toBe('0.01'); // 0.525 cents, half up
  });

  it('refuses overrides that break the schema, and unknown event names, saying what to do', () => {
    expect(() => createEvent('payment.success', { amount: '12' })).toThrow(
      /^\[@payhook\/testing\] createEvent\('payment\.success'\): the override of amount makes an invalid payload/,
    );
    expect(() => createEvent('payment.disputed' as never)).toThrow(
      /^\[@payhook\/testing\] createEvent: "payment\.disputed" is not an event of the service/,
    );
  });

  it('createEvents gives the events of one transaction', () => {
    const [paid, refunding, refunded] = createEvents(['payment.success', 'payment.refunding', 'payment.refunded'], { amount: '10.00' });
    for (const e of [refunding, refunded]) {
      expect(e).toMatchObject({ reference: paid.reference, merchantReference: paid.merchantReference, paidAt: null, amount: '10.00' });
    }
    expect(paid.paidAt).toEqual(expect.any(String));
    expect([paid.status, refunding.status, refunded.status]).toEqual(['completed', 'refunding', 'refunded']);
    const [failed] = createEvents(['payment.failed']);
    expect(failed.paidAt).toBeNull();
  });
});

describe('signedBody and signedRequest', () => {
  it("sign with the service's scheme (checked against a vector computed with openssl)", () => {
    // printf '%s' '{"event":"payment.success"}' | openssl dgst -sha256 -hmac whsec_signing_tests
    const golden = 'sha256=90d9757602204f39d1bf433e9547003997c26e99ea21e489ed45cbb86342cf06';
    const signed = signedBody('{"event":"payment.success"}', { secret });
    expect(signed.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(signed.signature).toBe(golden);
    expect(signed.headers).toEqual({ 'content-type': 'application/json', 'x-service-signature': signed.signature });
    expect(verifySignature(signed.body, signed.signature, secret)).toEqual({ ok: true, secretIndex: 0 });
    expect(() => signedBody({}, {} as { secret: string })).toThrow(/^\[@payhook\/testing\] signedBody needs \{ secret \}/);
  });

  it('make requests a receiver accepts, in process and with supertest', async () => {
    const handled: string[] = [];
    const receiver = createReceiver({ secret, logger: quiet }).onAny((event) => void handled.push(event.event));
    const event = createEvent('payment.refunded');

    const response = await receiver.handle(signedRequest(event, { secret }));
    expect([response.status, await response.json()]).toEqual([200, { outcome: 'processed' }]);
    const wrong = await receiver.handle(signedRequest(createEvent('payment.success'), { secret: 'whsec_other' }));
    expect(wrong.status).toBe(401);
    const tampered = await receiver.handle(
      signedRequest(event, { secret, headers: { 'x-service-signature': `sha256=${'0'.repeat(64)}` } }),
    );
    expect(tampered.status).toBe(401);

    const app = express();
    app.all('/webhooks', payhookExpress(receiver));
    const another = createEvent('payment.success');
    const delivery = signedBody(another, { secret });
    await request(app).post('/webhooks').set(delivery.headers).send(delivery.body).expect(200, { outcome: 'processed' });
    await request(app).post('/webhooks').set(delivery.headers).send(delivery.body).expect(200, { outcome: 'duplicate' });
    expect(handled).toEqual(['payment.refunded', 'payment.success']);
  });

  it('signs bytes as they are', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify(createEvent('payment.success')));
    const receiver = createReceiver({ secret, logger: quiet }).onAny(() => {});
    const response = await receiver.handle(signedRequest(bytes, { secret, url: 'http://shop.test/hooks' }));
    expect(response.status).toBe(200);
    expect(signedBody(bytes, { secret }).body).toBe(bytes);
  });

  it('types body as a string for an event or a string, and as the bytes given for bytes (checked by tsc in `pnpm test`)', async () => {
    const event = createEvent('payment.success');
    const signed = signedBody(event, { secret });
    expectTypeOf(signed.body).toEqualTypeOf<string>();
    expectTypeOf(signedBody('{"event":"payment.success"}', { secret }).body).toEqualTypeOf<string>();
    expectTypeOf(signedBody(new TextEncoder().encode('{}'), { secret }).body).toEqualTypeOf<Uint8Array<ArrayBuffer>>();
    const buffer = Buffer.from('{}');
    expectTypeOf(signedBody(buffer, { secret }).body).toEqualTypeOf<typeof buffer>();
    const either = event as EventOrBytes;
    expectTypeOf(signedBody(either, { secret }).body).toEqualTypeOf<string | Uint8Array>();

    // Without a cast: JSON.parse and fetch's Request take it as it is.
    expect(JSON.parse(signed.body)).toEqual(event);
    const receiver = createReceiver({ secret, logger: quiet }).onAny(() => {});
    const response = await receiver.handle(
      new Request('http://shop.test/webhooks', { method: 'POST', headers: signed.headers, body: signed.body }),
    );
    expect(response.status).toBe(200);
  });
});
