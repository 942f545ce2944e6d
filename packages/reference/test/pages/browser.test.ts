import { mkdirSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createReceiver, type PaymentEvent } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, runBrowserTests } from '@payhook/test-support/browser';
import { merchants, receiver, SECRET, start, validInput, type Receiver, type Started } from '@payhook/test-support/apps/reference-service';

/** The checkout page and the dashboard: into docs/ when asked (PAYHOOK_SCREENSHOTS=1, for the guides), else a temporary folder. */
export const SCREENSHOTS =
  process.env.PAYHOOK_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../../../docs/reference/', import.meta.url))
    : mkdtempSync(join(tmpdir(), 'payhook-reference-shots-'));

describe.runIf(runBrowserTests)('checkout page and dashboard in headless Chromium', () => {
  let browser: Browser;
  let s: Started;
  let raw: Receiver;
  const handled: PaymentEvent[] = [];
  const hook = createServer(
    toNodeListener(
      createReceiver({ secret: SECRET }).on(['payment.success', 'payment.failed', 'payment.cancelled', 'payment.refunding'], (event) => {
        handled.push(event);
      }),
    ),
  );

  beforeAll(async () => {
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/webhooks`;
    // A receiver whose answer is markup and long: the dashboard shows it escaped and truncated.
    raw = await receiver((_n, _r, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<i id="injected">thanks</i>${'x'.repeat(400)}`);
    });
    s = await start({ allowHttpCallbacks: true, merchants: merchants(hookUrl) });
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await raw?.close();
    await new Promise<void>((resolve) => {
      hook.close(() => resolve());
      hook.closeAllConnections();
    });
  });

  async function initialize(overrides: Record<string, unknown> = {}): Promise<{ reference: string; checkoutUrl: string }> {
    const init = await s.call('POST', '/v1/transactions/initialize', { body: validInput(overrides) });
    expect(init.status, JSON.stringify(init.json)).toBe(200);
    return init.json as { reference: string; checkoutUrl: string };
  }

  const submit = (page: Page, url: string | RegExp, selector: string) => Promise.all([page.waitForURL(url), page.click(selector)]);

  it('a person pays at checkout; the dashboard shows the transaction completed and its delivery', async () => {
    const { reference, checkoutUrl } = await initialize({ merchantReference: '<script>window.__pwned = 1</script>' });
    const page = await browser.newPage();
    await page.goto(checkoutUrl);
    expect(await page.textContent('#status')).toBe('processing');
    expect(await page.textContent('#amount')).toBe('100.00 ETB');
    expect(await page.textContent('h1')).toBe('Pay 100.00 ETB to Shop <Test>');
    // Hostile input is shown as text, never run.
    expect(await page.textContent('body')).toContain('<script>window.__pwned = 1</script>');
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    // An ordinary number pays without an OTP.
    expect(await page.locator('#otp').count()).toBe(0);

    await page.selectOption('select[name=paymentMethod]', 'mpesa');
    await submit(page, checkoutUrl, '#pay');
    expect(await page.textContent('#status')).toBe('completed');
    expect(await page.textContent('#message')).toContain('Payment completed');
    expect(await page.locator('#return').count()).toBe(0);

    await s.service.clock.advance(0);
    expect(handled.map((e) => [e.reference, e.event, e.paymentMethod])).toEqual([[reference, 'payment.success', 'mpesa']]);

    await page.goto(`${s.url}/_dashboard`);
    const row = page.locator('#transactions tr', { hasText: reference });
    expect(await row.locator('.status').textContent()).toBe('completed');
    expect(await row.textContent()).toContain('payment.success: delivered');
    // The search finds it by its merchant reference, and shows the search back as text.
    await page.fill('input[name=q]', '<script>window.__pwned');
    await page.selectOption('select[name=status]', 'completed');
    await Promise.all([page.waitForURL(/status=completed&q=/), page.click('#filter')]);
    expect(await page.locator('#transactions tbody tr').count()).toBe(1);
    expect(await page.inputValue('input[name=q]')).toBe('<script>window.__pwned');
    await Promise.all([page.waitForURL(/\/_dashboard\/transactions\//), row.locator('a').click()]);
    expect(await page.textContent('#status')).toBe('completed');
    expect(await page.locator('#timeline').textContent()).toContain('payment_completed');
    const delivery = page.locator('.delivery');
    expect(await delivery.locator('.state').textContent()).toBe('delivered');
    expect(await delivery.locator('tr.attempt .response-status').textContent()).toBe('200');
    await page.close();
  });

  it('Fail at checkout fails the payment and links back to the merchant; Cancel cancels', async () => {
    const returnUrl = 'https://shop.example/orders/1?from="checkout"';
    const failed = await initialize({ returnUrl });
    const page = await browser.newPage();
    await page.goto(failed.checkoutUrl);
    await submit(page, failed.checkoutUrl, '#fail');
    expect(await page.textContent('#status')).toBe('failed');
    expect(await page.locator('#pay, #fail').count()).toBe(0);
    expect(await page.getAttribute('#return', 'href')).toBe(returnUrl);
    expect(await page.textContent('#return')).toBe('Return to merchant');
    await s.service.clock.advance(0);
    expect(handled.at(-1)).toMatchObject({ reference: failed.reference, event: 'payment.failed', status: 'failed' });

    const cancelled = await initialize({ returnUrl });
    await page.goto(cancelled.checkoutUrl);
    await submit(page, cancelled.checkoutUrl, '#cancel');
    expect(await page.textContent('#status')).toBe('cancelled');
    expect(await page.getAttribute('#return', 'href')).toBe(returnUrl);
    await s.service.clock.advance(0);
    expect(handled.at(-1)).toMatchObject({ reference: cancelled.reference, event: 'payment.cancelled', status: 'cancelled' });

    const missing = await page.goto(`${s.url}/checkout/PNOSUCHREF20260101`);
    expect(missing!.status()).toBe(404);
    expect(missing!.headers()['content-type']).toMatch(/^text\/html/);
    expect(await page.textContent('h1')).toBe('Checkout not found');
    expect(await page.textContent('#message')).toContain('PNOSUCHREF20260101');
    await page.close();
  });

  it('a sandbox number asks for its OTP: a wrong one moves nothing, the documented one gives the outcome', async () => {
    const paid = await initialize({ customerPhone: '0900000001' });
    const page = await browser.newPage();
    await page.goto(paid.checkoutUrl);
    expect(await page.locator('#otp').count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'checkout.png'), fullPage: true });
    const before = s.service.deliveries({ reference: paid.reference }).length;
    await page.fill('#otp', '999999');
    await submit(page, /error=otp-wrong/, '#pay');
    expect(await page.textContent('#error')).toContain('not right');
    expect(await page.textContent('#status')).toBe('processing');
    await submit(page, /error=otp-missing/, '#pay');
    expect(await page.textContent('#error')).toContain('Enter the one-time password');
    await s.service.clock.advance(0);
    expect(s.service.deliveries({ reference: paid.reference })).toHaveLength(before);
    await page.fill('#otp', '123456');
    await submit(page, paid.checkoutUrl, '#pay');
    expect(await page.textContent('#status')).toBe('completed');

    const invalid = await initialize({ customerPhone: '251900000002' });
    await page.goto(invalid.checkoutUrl);
    await page.fill('#otp', '654321');
    await submit(page, invalid.checkoutUrl, '#pay');
    expect(await page.textContent('#status')).toBe('failed');
    const timeline = await s.call('GET', `/v1/transactions/${invalid.reference}/timeline`);
    expect(timeline.json.events.at(-1)).toMatchObject({ eventType: 'payment_failed', errorCode: 'INVALID_OTP', status: 'failed' });

    const declined = await initialize({ customerPhone: '0900000004' });
    await page.goto(declined.checkoutUrl);
    expect(await page.locator('#otp').count()).toBe(0);
    await submit(page, declined.checkoutUrl, '#pay');
    expect(await page.textContent('#status')).toBe('failed');
    await s.service.clock.advance(0);
    expect(handled.at(-1)).toMatchObject({ reference: declined.reference, event: 'payment.failed' });
    await page.close();
  });

  it('the dashboard refunds a paid transaction, resends a delivery and shows the answer escaped and truncated', async () => {
    const { reference } = await initialize({ customerPhone: '0900000010', callbackUrl: raw.url });
    await s.service.clock.advance(0);
    const page = await browser.newPage();
    await page.goto(`${s.url}/_dashboard/transactions/${reference}`);
    expect(await page.textContent('#status')).toBe('completed');
    expect(await page.locator('#actions button').allTextContents()).toEqual(['Refund', 'Reverse']);
    const detail = page.url();

    await submit(page, detail, '#action-refund');
    expect(await page.textContent('#status')).toBe('refunding');
    expect(await page.locator('#actions button').allTextContents()).toEqual(['Complete refund']);
    await s.service.clock.advance(0);
    expect(raw.requests.map((r) => JSON.parse(r.body.toString()).event)).toEqual(['payment.success', 'payment.refunding']);

    await page.reload();
    const first = page.locator('.delivery').first();
    const body = first.locator('tr.attempt .response-body');
    expect(await body.textContent()).toMatch(/^<i id="injected">thanks<\/i>x+… \(truncated\)$/);
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await first.locator('tr.attempt .latency').textContent()).toMatch(/^\d+$/);

    const id = await first.getAttribute('id');
    await submit(page, /#dlv_\d+$/, `[id="${id}"] button.resend`);
    await s.service.clock.advance(0);
    expect(raw.requests).toHaveLength(3);
    expect(raw.requests[2]!.body.equals(raw.requests[0]!.body)).toBe(true);
    await page.reload();
    const copy = page.locator('.delivery', { hasText: `Resend of ${id}` });
    expect(await copy.locator('.state').textContent()).toBe('delivered');
    expect(await copy.locator('tr.attempt .response-status').textContent()).toBe('200');
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard.png'), fullPage: true });

    // A form posted from another origin is refused (CSRF), and moves nothing.
    const forged = await page.request.post(`${detail}/complete-refund`, { headers: { origin: 'https://evil.example' } });
    expect(forged.status()).toBe(403);
    expect((await s.call('GET', `/v1/transactions/${reference}`)).json.status).toBe('refunding');
    await page.close();
  });

  it('after an action the page follows the new delivery until it is answered, with no reload by hand', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = await receiver(async (n, _req, res) => {
      if (n > 1) await held;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"outcome":"processed"}');
    });
    const page = await browser.newPage();
    try {
      const { reference } = await initialize({ customerPhone: '0900000010', callbackUrl: slow.url });
      await s.service.clock.advance(0);
      await page.goto(`${s.url}/_dashboard/transactions/${reference}`);
      expect(await page.locator('#refreshing').count()).toBe(0);
      let loads = 0;
      page.on('load', () => loads++);
      await submit(page, page.url(), '#action-refund');
      const refund = page.locator('.delivery', { hasText: 'payment.refunding' });
      expect(await refund.locator('.state').textContent()).toBe('pending');
      expect(await page.locator('#refreshing').count()).toBe(1);

      release();
      await refund.locator('tr.attempt .response-status').waitFor({ timeout: 10_000 });
      expect(await refund.locator('tr.attempt .response-status').textContent()).toBe('200');
      expect(await refund.locator('.state').textContent()).toBe('delivered');
      expect(await page.locator('#refreshing, meta[http-equiv=refresh]').count()).toBe(0);
      // The redirect after the post, then at least one reload the page made itself.
      expect(loads).toBeGreaterThanOrEqual(2);
    } finally {
      await page.close();
      await slow.close();
    }
  });
});
