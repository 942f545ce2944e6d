// Erasing a customer from the board, over real HTTP (issue 51, §3.4): an email or a phone is
// matched whole, in the kept bodies and in the refusals' prefixes, and a value that is only a part
// of one (`e`, `@`, `.com`, `0911`) is refused with payhook's words, erasing nothing: otherwise one
// crafted link would take every refusal, the evidence of an attack with them.
import { describe, expect, it } from 'vitest';
import { BASE, boardApps, boardBrowser, eventBody } from '@payhook/test-support/apps/board-app';

const start = boardApps();
type App = Awaited<ReturnType<typeof start>>;
const FORGED = `sha256=${'0'.repeat(64)}`;

/** A signed-in browser's posts of the erase-customer form, with the token its pages carry. */
async function eraser(app: App) {
  const { post } = await boardBrowser(app.origin);
  return async (fields: { email?: string; phone?: string }) => {
    const r = await post('erase-customer', { email: '', phone: '', ...fields });
    const text = await r.text();
    return { status: r.status, location: r.headers.get('location'), alert: /role="alert">([^<]*)<\/p>/.exec(text)?.[1] };
  };
}

/** Two customers' payments, and refusals naming them, a longer address or number, or no one. */
async function ledgerOfCustomers(app: App) {
  await app.deliver(eventBody('P_ADA', { customer: { name: 'Ada', email: 'ada@example.com', phone: '+251911000001' } }));
  await app.deliver(eventBody('P_BOB', { customer: { name: 'Bob', email: 'bob@example.com', phone: '+251 911 000 002' } }));
  // Refusals keep the first 64 characters of what came: these name a customer early.
  const refusal = (reference: string, said: string) => app.deliver(`{"reference":"${reference}",${said}}`, FORGED);
  await refusal('R_ADA', '"email":"Ada@Example.COM"');
  await refusal('R_ADA_LONGER', '"email":"ada@example.com.au"');
  await refusal('R_SADA', '"email":"sada@example.com"');
  await refusal('R_BOB', '"phone":"+251 (911) 000-002"');
  await refusal('R_BOB_LONGER', '"phone":"+2519110000021"');
  await refusal('R_EVE', '"email":"eve@evil.example","phone":"0911999999"');
}

const references = async (app: App) => (await app.receiver.store.ledger!.list({ limit: 100 })).map((e) => e.reference ?? '(none)').sort();
const ALL = ['P_ADA', 'P_BOB', 'R_ADA', 'R_ADA_LONGER', 'R_BOB', 'R_BOB_LONGER', 'R_EVE', 'R_SADA'];

describe('erasing a customer from the board', () => {
  it.each(['e', '@', '.com', 'example.com', 'ada@', 'ada@example', 'ada @example.com', 'ada@example.com, bob@example.com'])(
    'refuses the email %j as not one whole address (409, payhook’s words), and erases nothing',
    async (email) => {
      const app = await start();
      await ledgerOfCustomers(app);
      const erase = await eraser(app);
      expect(await erase({ email })).toEqual({
        status: 409,
        location: null,
        alert:
          '[@payhook/core] eraseDeliveries: the email must be one whole address, like ada@example.com (a name, one @, a domain with a dot; no spaces): a customer is erased by their address, never by a part of one.',
      });
      expect(await references(app)).toEqual(ALL);
    },
  );

  it.each(['0911', '+251 911', '2519110000021234', 'call 0911000002', '0911000002 ext 5', '+251911000002+'])(
    'refuses the phone %j as not one whole number of 7 to 15 digits (409), and erases nothing',
    async (phone) => {
      const app = await start();
      await ledgerOfCustomers(app);
      const erase = await eraser(app);
      expect(await erase({ phone })).toEqual({
        status: 409,
        location: null,
        alert:
          '[@payhook/core] eraseDeliveries: the phone must be one whole number of 7 to 15 digits, like +251 911 234 567 (digits, spaces, + ( ) - . only): a customer is erased by their number, never by a part of one.',
      });
      expect(await references(app)).toEqual(ALL);
    },
  );

  it('erases by a whole address, case aside: her payment and the refusal naming her, not a longer address nor another', async () => {
    const app = await start();
    await ledgerOfCustomers(app);
    const erase = await eraser(app);
    expect(await erase({ email: ' ADA@example.com ' })).toEqual({ status: 303, location: `${BASE}?erased=2`, alert: undefined });
    expect(await references(app)).toEqual(['P_BOB', 'R_ADA_LONGER', 'R_BOB', 'R_BOB_LONGER', 'R_EVE', 'R_SADA']);
    // The longer address is a customer of its own, erased by its own whole address.
    expect((await erase({ email: 'ada@example.com.au' })).location).toBe(`${BASE}?erased=1`);
    expect(await references(app)).toEqual(['P_BOB', 'R_BOB', 'R_BOB_LONGER', 'R_EVE', 'R_SADA']);
  });

  it('erases by a whole phone number, digits only compared: his payment and the refusal naming him, not a longer number', async () => {
    const app = await start();
    await ledgerOfCustomers(app);
    const erase = await eraser(app);
    expect((await erase({ phone: '+251-911-000-002' })).location).toBe(`${BASE}?erased=2`);
    expect(await references(app)).toEqual(['P_ADA', 'R_ADA', 'R_ADA_LONGER', 'R_BOB_LONGER', 'R_EVE', 'R_SADA']);
  });
});
