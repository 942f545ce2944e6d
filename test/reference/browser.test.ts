import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, type PaymentEvent } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchants, SECRET, start, validInput, type Started } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
// Without chromium the browser test is skipped, except when services are required: then it fails.
const run = present || process.env.PAYHOOK_REQUIRE_SERVICES === '1';

describe.runIf(run)('checkout page and dashboard in headless Chromium', () => {
  let browser: Browser;
  let s: Started;
  const handled: PaymentEvent[] = [];
  const hook = createServer(
    toNodeListener(
      createReceiver({ secret: SECRET }).on(['payment.success', 'payment.cancelled'], (event) => {
        handled.push(event);
      }),
    ),
  );

  beforeAll(async () => {
    if (!present) {
      throw new Error(`[@payhook/reference] ${CHROMIUM} is missing: install it with apt-get update && apt-get install -y chromium.`);
    }
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/webhooks`;
    s = await start({ allowHttpCallbacks: true, merchants: merchants(hookUrl) });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await new Promise<void>((resolve) => {
      hook.close(() => resolve());
      hook.closeAllConnections();
    });
  });

  it('a person pays at checkout; the dashboard shows the transaction completed and its delivery', async () => {
    const init = await s.call('POST', '/v1/transactions/initialize', {
      body: validInput({ merchantReference: '<script>window.__pwned = 1</script>' }),
    });
    const { reference, checkoutUrl } = init.json.data as { reference: string; checkoutUrl: string };
    const page = await browser.newPage();
    await page.goto(checkoutUrl);
    expect(await page.textContent('#status')).toBe('processing');
    expect(await page.textContent('#amount')).toBe('100.00 ETB');
    // Hostile input is shown as text, never run.
    expect(await page.textContent('body')).toContain('<script>window.__pwned = 1</script>');
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();

    await page.selectOption('select[name=paymentMethod]', 'mpesa');
    await Promise.all([page.waitForURL(checkoutUrl), page.click('#pay')]);
    expect(await page.textContent('#status')).toBe('completed');
    expect(await page.textContent('#message')).toContain('Payment completed');

    await s.service.clock.advance(0);
    expect(handled.map((e) => [e.reference, e.event, e.paymentMethod])).toEqual([[reference, 'payment.success', 'mpesa']]);

    await page.goto(`${s.url}/_dashboard`);
    const row = page.locator('#transactions tr', { hasText: reference });
    expect(await row.locator('.status').textContent()).toBe('completed');
    expect(await row.textContent()).toContain('payment.success: delivered');
    await Promise.all([page.waitForURL(/\/_dashboard\/transactions\//), row.locator('a').click()]);
    expect(await page.textContent('#status')).toBe('completed');
    expect(await page.locator('#timeline').textContent()).toContain('payment.success');
    const delivery = page.locator('.delivery');
    expect(await delivery.locator('.state').textContent()).toBe('delivered');
    expect(await delivery.locator('tr.attempt td').nth(2).textContent()).toBe('200');
    await page.close();
  });

  it('a person cancels at checkout', async () => {
    const init = await s.call('POST', '/v1/transactions/initialize', { body: validInput() });
    const { reference, checkoutUrl } = init.json.data as { reference: string; checkoutUrl: string };
    const page = await browser.newPage();
    await page.goto(checkoutUrl);
    await Promise.all([page.waitForURL(checkoutUrl), page.click('#cancel')]);
    expect(await page.textContent('#status')).toBe('cancelled');
    expect(await page.locator('#pay').count()).toBe(0);
    await s.service.clock.advance(0);
    expect(handled.at(-1)).toMatchObject({ reference, event: 'payment.cancelled', status: 'cancelled' });
    await page.close();
  });
});
