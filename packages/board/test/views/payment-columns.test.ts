// Issue 51: the list answers "which order is this?" (order id, amount, customer from a kept body,
// or why there is none), a confirmation names the payment, and a live row (§3.1) carries the same
// columns, every text written out as the server-rendered list writes it.
import { describe, expect, it } from 'vitest';
import { BASE, boardApps, boardOver, eventBody, getPage, ledgerRecord, RECORDS_AT } from '@payhook/test-support/apps/board-app';
import { openLive } from '../sse.js';

const start = boardApps();
const T0 = RECORDS_AT;
const record = ledgerRecord;
const kept = (body: unknown) => ({ body: typeof body === 'string' ? body : JSON.stringify(body), bodyEncoding: 'utf8' as const });

/** A row's Order and Amount cells. */
const paymentCells = (page: string, id: string) =>
  new RegExp(`<tr data-id="${id}">.*?(<td class="order" data-label="Order">.*?</td><td class="num" data-label="Amount">.*?</td>)`).exec(
    page,
  )?.[1];
const cells = (order: string, amount = '') =>
  `<td class="order" data-label="Order">${order}</td><td class="num" data-label="Amount">${amount}</td>`;

describe('the list’s Order and Amount columns', () => {
  it('shows the order id, the customer (email, else phone) and the amount with its currency, from a kept body', async () => {
    const { origin, deliver } = await start({ live: { maxOpen: 0 } });
    await deliver(eventBody('ref_email'));
    await deliver(eventBody('ref_phone', { customer: { name: 'Almaz', email: null, phone: '0911223344' }, amount: '99.50' }));
    await deliver(eventBody('ref_nobody', { customer: null, merchantReference: '<b>o\u202e1</b>' }));
    const page = (await getPage(origin, `${BASE}/`)).text;
    const row = (reference: string) =>
      new RegExp(`<td class="value" data-label="Reference">${reference}</td>(.*?)<td data-label="Event">`).exec(page)?.[1];
    expect(row('ref_email')).toBe(
      cells('<span class="value">order-ref_email</span><span class="customer muted">abebe@example.com</span>', '150.00 ETB'),
    );
    expect(row('ref_phone')).toBe(
      cells('<span class="value">order-ref_phone</span><span class="customer muted">0911223344</span>', '99.50 ETB'),
    );
    // The merchant's text escaped, a bidi control written out; no customer, nothing under the order.
    expect(row('ref_nobody')).toBe(cells('<span class="value">&lt;b&gt;o\\u202e1&lt;/b&gt;</span>', '150.00 ETB'));
    expect(page).not.toContain('\u202e');
  });

  it('says in a few words why a record shows none: refused, not kept, not UTF-8, not JSON, no order in it', async () => {
    const page = await (
      await boardOver([
        record('d_1', {
          signature: 'invalid',
          outcome: 'unauthorized',
          status: 401,
          bodySha256: 'ab',
          bodyPrefix: '{"merchantReference":"x"',
        }),
        record('d_2', { bodySha256: 'cd' }),
        record('d_3', { body: 'AAEC', bodyEncoding: 'base64' }),
        record('d_4', kept('a=1')),
        record('d_5', kept({ note: 'no payment here' })),
        record('d_6', kept('[1]')),
        record('d_7', {
          source: 'reconcile',
          signature: 'not-checked',
          ...kept({ merchantReference: 'o-7', amount: '5.00', currencyCode: 'USD' }),
        }),
        record('d_8', kept({ merchantReference: 42, amount: '1.00' })),
      ])
    )('/');
    const muted = (why: string) => cells(`<span class="muted">${why}</span>`);
    expect(paymentCells(page, 'd_1')).toBe(muted('refused: body never parsed'));
    expect(paymentCells(page, 'd_2')).toBe(muted('body not kept'));
    expect(paymentCells(page, 'd_3')).toBe(muted('body not UTF-8'));
    expect(paymentCells(page, 'd_4')).toBe(muted('body not JSON'));
    expect(paymentCells(page, 'd_5')).toBe(muted('body names no order'));
    expect(paymentCells(page, 'd_6')).toBe(muted('body not a JSON object'));
    // A reconciled transaction calls its currency currencyCode.
    expect(paymentCells(page, 'd_7')).toBe(cells('<span class="value">o-7</span>', '5.00 USD'));
    // An order id that is not text is none; the amount is still shown.
    expect(paymentCells(page, 'd_8')).toBe(cells('<span class="muted">none</span>', '1.00'));
  });
});

describe('a confirmation names the payment', () => {
  const heading = (page: string) => /<h2>(.*?)<\/h2>/.exec(page)![1];
  it('by reference, order id and amount, the delivery and its customer below; without a kept body, by what there is', async () => {
    const get = await boardOver([
      record('d_1', kept(JSON.parse(eventBody('ref_d_1')))),
      record('d_2', { bodySha256: 'ab' }),
      record('d_3', { reference: undefined, ...kept(JSON.parse(eventBody('x'))) }),
      // An erasure names the order of the payment's newest record whose body was kept.
      record('d_4', { reference: 'ref_d_1', receivedAt: T0 + 1000, bodySha256: 'cd' }),
    ]);
    const replay = await get('/confirm?action=replay&id=d_1');
    expect(heading(replay)).toBe(
      'Replay: payment <code class="value">ref_d_1</code>, order <code class="value">order-ref_d_1</code>, 150.00 ETB?',
    );
    expect(replay).toMatch(
      /<\/h2><dl class="facts" id="subject"><dt>Delivery<\/dt><dd><code class="value">d_1<\/code>, received 2026-11-27 05:00:00 UTC<\/dd><dt>Customer<\/dt><dd class="value">abebe@example.com<\/dd><dt>Outcome<\/dt><dd><span class="outcome good"[^>]*>processed<\/span> \(200\)<\/dd><\/dl><p>/,
    );
    expect(heading(await get('/confirm?action=force&id=d_2'))).toBe('Force replay: payment <code class="value">ref_d_2</code>?');
    expect(await get('/confirm?action=force&id=d_2')).toContain('<dt>Order</dt><dd>body not kept</dd></dl>');
    expect(heading(await get('/confirm?action=retry&id=d_3'))).toBe(
      'Retry: delivery <code class="value">d_3</code>, order <code class="value">order-x</code>, 150.00 ETB?',
    );
    expect(heading(await get('/confirm?action=erase&reference=ref_d_1'))).toBe(
      'Erase: payment <code class="value">ref_d_1</code>, order <code class="value">order-ref_d_1</code>, 150.00 ETB?',
    );
    expect(heading(await get('/confirm?action=erase&reference=ref_d_2'))).toBe('Erase: payment <code class="value">ref_d_2</code>?');
  });
});

describe('a live row (§3.1)', () => {
  const HOSTILE = 'ref\u202e<b>1</b>\u001b[2J\u0007\ud800';
  const WRITTEN = 'ref\\u202e<b>1</b>\\x1b[2J\\x07\\ud800';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these raw characters are what must not arrive
  const raw = /[\u202e\u001b\u0007\ud800]/;

  it('sends a refused delivery’s reference and event written out, as the list shows them after a reload', async () => {
    const { origin, deliver } = await start({ live: { intervalMs: 20 } });
    const stream = await openLive(`${origin}${BASE}/live`);
    const r = await deliver(eventBody(HOSTILE, { event: `payment.success${HOSTILE}` }), 'sha256=00');
    expect(r.status).toBe(401);
    const [event] = await stream.until(1);
    stream.close();
    for (const value of Object.values(event!.data)) expect(typeof value === 'string' && raw.test(value)).toBe(false);
    expect(event!.data).toMatchObject({
      reference: WRITTEN,
      event: `payment.success${WRITTEN}`,
      outcome: 'unauthorized',
      why: 'refused: body never parsed',
      order: '',
      amount: '',
    });
    // The reloaded list writes the same text (HTML-escaped on top).
    const page = (await getPage(origin, `${BASE}/`)).text;
    expect(page).toContain(
      `<td class="value" data-label="Reference">${WRITTEN.replace('<b>', '&lt;b&gt;').replace('</b>', '&lt;/b&gt;')}</td>`,
    );
  });

  it('carries the Order and Amount columns of a kept body, written out too', async () => {
    const { origin, deliver } = await start({ live: { intervalMs: 20 } });
    const stream = await openLive(`${origin}${BASE}/live`);
    await deliver(eventBody('ref_live', { merchantReference: `order${HOSTILE}` }));
    const [event] = await stream.until(1);
    stream.close();
    expect(event!.data).toMatchObject({
      reference: 'ref_live',
      order: `order${WRITTEN}`,
      customer: 'abebe@example.com',
      amount: '150.00 ETB',
      why: '',
      resolved: '',
    });
  });
});
