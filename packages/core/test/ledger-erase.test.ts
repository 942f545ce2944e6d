import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, eraseDeliveries, memoryStore, type LedgerEntry } from '../src/index.js';

/*
 * eraseDeliveries (ledger/erase.ts) on the records a receiver writes, and on bodies only a forged
 * or odd record holds: what a query must be, and that it erases what it names and nothing else.
 */
const secret = 'whsec_erase';

async function deliveries() {
  const clock = manualClock(1_700_000_000_000);
  const store = memoryStore({ clock, ledger: true, warn: false });
  const receiver = createReceiver({ secret, store, clock, logger: () => {} }).on('payment.success', () => {});
  const ledger = store.ledger!;
  const pay = (reference: string, customer: { email?: string | null; phone?: string | null }) =>
    receiver.handle(signedRequest(createEvent('payment.success', { reference, customer } as never), { secret }));
  const post = (body: string) => receiver.handle(new Request('http://x/', { method: 'POST', body }));
  const references = async () => {
    await receiver.idle();
    return (await ledger.list({ limit: 100 })).map((e) => e.reference ?? '(none)').sort();
  };
  return { ledger, pay, post, references, receiver };
}

describe('eraseDeliveries', () => {
  it.each([[{ reference: 'P1', email: '' }], [{ email: '   ' }], [{ phone: 7 as unknown as string }], [{ reference: 'P1', phone: '' }]])(
    'refuses %j before erasing anything: each value a non-empty string',
    async (query) => {
      const { ledger, pay, references } = await deliveries();
      await pay('P1', { email: 'ada@example.com' });
      await references();
      await expect(eraseDeliveries(ledger, query)).rejects.toThrow(
        /^\[@payhook\/core\] eraseDeliveries needs a reference, an email or a phone, each a non-empty string; got \{/,
      );
      expect(await references()).toEqual(['P1']);
    },
  );

  it('refuses a phone with no digits in it, naming it', async () => {
    const { ledger } = await deliveries();
    await expect(eraseDeliveries(ledger, { phone: 'call me' })).rejects.toThrow(
      '[@payhook/core] eraseDeliveries: the phone "call me" holds no digits.',
    );
  });

  it("erases a payment and a customer given together: the payment's records and the customer's, and nothing else", async () => {
    const { ledger, pay, references } = await deliveries();
    await pay('P1', { email: 'ada@example.com', phone: null });
    await pay('P2', { email: 'bob@example.com', phone: '0911 000 002' });
    await pay('P3', { email: 'carol@example.com', phone: null });
    await pay('P4', { email: null, phone: '0911000004' });
    expect(await references()).toEqual(['P1', 'P2', 'P3', 'P4']);
    expect(await eraseDeliveries(ledger, { reference: 'P1', email: 'BOB@example.com' })).toEqual({ erased: 2 });
    expect(await references()).toEqual(['P3', 'P4']);
    expect(await eraseDeliveries(ledger, { reference: 'P3', phone: '(0911) 000-004' })).toEqual({ erased: 2 });
    expect(await references()).toEqual([]);
  });

  it('erases a refusal whose kept prefix names the email, any case; a record of no payment and an unreadable body stay', async () => {
    const { ledger, pay, post, references, receiver } = await deliveries();
    await post(JSON.stringify({ reference: 'R1', customer: { email: 'Ada@Example.COM' } }));
    await post('no payment named here');
    // Signed, so its bytes are kept: a body that is not JSON names no customer.
    await receiver.handle(signedRequest('{"not json', { secret }));
    await pay('P1', { email: 'bob@example.com', phone: null });
    expect(await references()).toEqual(['(none)', '(none)', 'P1', 'R1']);
    expect((await ledger.list({ outcome: 'malformed' }))[0]?.body).toBe('{"not json');
    expect(await eraseDeliveries(ledger, { email: 'ada@example.com' })).toEqual({ erased: 1 });
    expect(await eraseDeliveries(ledger, { phone: '0911' })).toEqual({ erased: 0 });
    expect(await references()).toEqual(['(none)', '(none)', 'P1']);
  });

  it('reads a customer from a body kept as base64', async () => {
    const { ledger } = await deliveries();
    const event = createEvent('payment.success', { reference: 'B64', customer: { email: 'ada@example.com' } });
    const record: LedgerEntry = {
      id: 'b64',
      receivedAt: 1_700_000_000_000,
      source: 'webhook',
      reference: 'B64',
      outcome: 'processed',
      status: 200,
      durationMs: 1,
      signature: 'valid',
      body: Buffer.from(JSON.stringify(event)).toString('base64'),
      bodyEncoding: 'base64',
    };
    await ledger.append([record]);
    expect(await eraseDeliveries(ledger, { email: 'ada@example.com' })).toEqual({ erased: 1 });
  });
});
