import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, eraseDeliveries, memoryStore, type LedgerEntry } from '../../src/index.js';

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

  it.each(['call me', '0911', '+251 911', '0911 000 002 ext 7', '1234567890123456'])(
    'refuses the phone %j, not one whole number of 7 to 15 digits, without repeating it',
    async (phone) => {
      const { ledger } = await deliveries();
      await expect(eraseDeliveries(ledger, { phone })).rejects.toThrow(
        '[@payhook/core] eraseDeliveries: the phone must be one whole number of 7 to 15 digits, like +251 911 234 567 (digits, spaces, + ( ) - . only): a customer is erased by their number, never by a part of one.',
      );
    },
  );

  it.each([
    'e',
    '@',
    '.com',
    '@example.com',
    'ada@',
    'ada@example',
    'ada@@example.com',
    '.ada@example.com',
    'ada..b@example.com',
    'ada@example..com',
    `${'a'.repeat(65)}@example.com`,
  ])('refuses the email %j, not one whole address, before reading anything', async (email) => {
    const { ledger, pay, references } = await deliveries();
    await pay('P1', { email: 'ada@example.com' });
    await references();
    await expect(eraseDeliveries(ledger, { email })).rejects.toThrow(
      '[@payhook/core] eraseDeliveries: the email must be one whole address, like ada@example.com (a name, one @, a domain with a dot; no spaces): a customer is erased by their address, never by a part of one.',
    );
    expect(await references()).toEqual(['P1']);
  });

  it('finds an address or a number in a refusal only where it stands whole: not inside a longer one, nor glued to an escape', async () => {
    const { ledger, post, references } = await deliveries();
    const said = {
      R1: '"to":"ADA@example.com"',
      R2: '"to":"ada@example.com.et"',
      R3: '"to":"xada@example.com"',
      R4: '"to":"ada@example.company"',
      R5: '"to":"\\nada@example.com"',
      R6: '"to":"\\u202eada@example.com."',
      R7: '"tel":"+251 911 000 001"',
      R8: '"tel":"2519110000019"',
      R9: '"tel":"a251911000001"',
    };
    for (const [reference, text] of Object.entries(said)) await post(`{"reference":"${reference}",${text}}`);
    // A U+202E the sender put in raw is kept escaped (\u202e): it ends the address before it as much as a quote does.
    await post('{"reference":"R10","to":"\u202eada@example.com"}');
    expect(await references()).toEqual(['R1', 'R10', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7', 'R8', 'R9']);
    expect(await eraseDeliveries(ledger, { email: 'ada@example.com' })).toEqual({ erased: 4 });
    expect(await references()).toEqual(['R2', 'R3', 'R4', 'R7', 'R8', 'R9']);
    expect(await eraseDeliveries(ledger, { phone: '+251911000001' })).toEqual({ erased: 1 });
    expect(await references()).toEqual(['R2', 'R3', 'R4', 'R8', 'R9']);
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
    expect(await eraseDeliveries(ledger, { phone: '0911000000' })).toEqual({ erased: 0 });
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
