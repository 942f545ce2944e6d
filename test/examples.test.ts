import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchants, SANDBOX_KEY, SECRET, start, type Started } from '@payhook/test-support/apps/reference-service';
import { freePort, startExample, type ExampleName } from '@payhook/test-support/apps/examples';
import { until } from '@payhook/test-support/wait';

const MINUTE = 60_000;
const BOARD_PASSWORD = 'board-pass';
const signedIn = { authorization: `Basic ${Buffer.from(`admin:${BOARD_PASSWORD}`).toString('base64')}` };

const examples: [name: ExampleName, readyWithinMs: number][] = [
  ['express', 30_000],
  ['fastify', 30_000],
  ['hono', 30_000],
  // Next is built first (once per test run, shared with the security suites).
  ['next', 240_000],
];

describe.each(examples)('examples/%s end to end against the reference service', (name, readyWithinMs) => {
  let ref: Started;
  let app: Awaited<ReturnType<typeof startExample>>;

  beforeAll(async () => {
    const port = await freePort();
    ref = await start({ allowHttpCallbacks: true, merchants: merchants(`http://127.0.0.1:${port}/webhooks`) });
    app = await startExample(
      name,
      {
        PORT: String(port),
        PAYHOOK_BASE_URL: ref.url,
        PAYHOOK_API_KEY: SANDBOX_KEY,
        PAYHOOK_WEBHOOK_SECRET: SECRET,
        PAYHOOK_BOARD_PASSWORD: BOARD_PASSWORD,
      },
      readyWithinMs,
    );
  }, readyWithinMs + 10_000);
  afterAll(async () => {
    await app?.stop();
    await ref?.close();
  });

  const order = async (merchantReference: string) => (await fetch(`${app.url}/orders/${merchantReference}`)).json();

  it('checkout, pay, webhook; then a duplicate and a refund', async () => {
    const merchantReference = `${name}-order-1`;
    const checkout = await fetch(`${app.url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '250.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference }),
    });
    expect(checkout.status).toBe(200);
    const { reference, checkoutUrl } = await checkout.json();
    expect(checkoutUrl).toContain(reference);
    expect(await order(merchantReference)).toEqual({ merchantReference, reference, status: 'pending', events: [] });

    expect((await ref.call('POST', `/_sandbox/transactions/${reference}/pay`)).status).toBe(200);
    await ref.service.clock.advance(0);
    expect(await order(merchantReference)).toMatchObject({ reference, status: 'completed', events: ['payment.success'] });

    // Every delivery of the refund arrives three times; each event still runs once.
    await ref.call('POST', '/_sandbox/faults', { body: { type: 'duplicate', count: 2, times: 2, reference } });
    await ref.call('POST', `/_sandbox/transactions/${reference}/refund`);
    await ref.call('POST', `/_sandbox/transactions/${reference}/complete-refund`);
    await ref.service.clock.advance(10 * MINUTE);
    expect(await order(merchantReference)).toMatchObject({
      status: 'refunded',
      events: ['payment.success', 'payment.refunding', 'payment.refunded'],
    });
    const deliveries = ref.service.deliveries({ reference });
    expect(deliveries.length).toBe(7);
    expect(deliveries.every((d) => d.state === 'delivered')).toBe(true);
  });

  it('serves the board at /admin/payments behind Basic auth: the paid order listed, a replay posted with the page’s token', async () => {
    const board = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${app.url}${path}`, { redirect: 'manual', headers: { ...signedIn, ...headers } });
    const closed = await fetch(`${app.url}/admin/payments`, { redirect: 'manual' });
    expect(closed.status).toBe(401);
    expect(closed.headers.get('www-authenticate')).toBe('Basic realm="payhook board", charset="UTF-8"');

    const merchantReference = `${name}-order-board`;
    const checkout = await fetch(`${app.url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '120.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference }),
    });
    const { reference } = await checkout.json();
    expect((await ref.call('POST', `/_sandbox/transactions/${reference}/pay`)).status).toBe(200);
    await ref.service.clock.advance(0);
    expect(await order(merchantReference)).toMatchObject({ status: 'completed' });

    // The ledger records a delivery after its answer (its writer loaded at the first record): a
    // real condition, bounded, rather than one read that can come first.
    await until(async () => (await (await board('/admin/payments')).text()).includes(`>${reference}<`), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: `the board to list ${reference}`,
    });
    const list = await board('/admin/payments');
    expect(list.status).toBe(200);
    expect(await list.text()).toContain(`>${reference}<`);
    // The payment's delivery, by the link the filtered list gives it.
    const found = await (await board(`/admin/payments?reference=${reference}&outcome=processed`)).text();
    const id = decodeURIComponent(/href="\/admin\/payments\/deliveries\/([^"]+)"/.exec(found)![1]!);
    const confirm = await board(`/admin/payments/confirm?action=replay&id=${encodeURIComponent(id)}`);
    expect(confirm.status).toBe(200);
    const cookie = confirm.headers.getSetCookie()[0]!.split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await confirm.text())![1]!;
    const replay = await fetch(`${app.url}/admin/payments/actions/replay`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        ...signedIn,
        cookie,
        origin: app.url,
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf, id }).toString(),
    });
    expect(replay.status).toBe(303);
    const after = await board(replay.headers.get('location')!, { cookie });
    expect(await after.text()).toMatch(/Replayed: <span[^>]*>duplicate<\/span>/);
  });

  it("answers a bad checkout with the service's message", async () => {
    const res = await fetch(`${app.url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '250', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference: 'bad' }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/amount must be/);
  });
});
