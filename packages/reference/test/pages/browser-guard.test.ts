import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, runBrowserTests } from '@payhook/test-support/browser';
import { merchants, receiver, start, validInput, type Receiver, type Started } from '@payhook/test-support/apps/reference-service';

// Issue 31: in Chromium, a page on another origin cannot drive the checkout or the dashboard, nor can
// a name rebound to the service (evil.example resolves to 127.0.0.1, as after DNS rebinding); the
// pages still take their own forms. page-guard.test.ts forges each header by hand.
describe.runIf(runBrowserTests)('the pages in Chromium answer only to themselves', () => {
  let browser: Browser;
  let s: Started;
  let hook: Receiver;
  /** An attacker's page that posts an empty form to `?to=` as soon as it loads. */
  const attacker: Server = createServer((req, res) => {
    const to = new URL(req.url!, 'http://x').searchParams.get('to')!.replace(/"/g, '&quot;');
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<form id="f" method="post" action="${to}"></form><script>document.getElementById('f').submit()</script>`);
  });

  beforeAll(async () => {
    hook = await receiver();
    s = await start({ allowHttpCallbacks: true, merchants: merchants(hook.url) });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    browser = await launchChromium(['--host-resolver-rules=MAP evil.example 127.0.0.1']);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await hook?.close();
    await new Promise<void>((resolve) => {
      attacker.close(() => resolve());
      attacker.closeAllConnections();
    });
  });

  async function initialize(overrides: Record<string, unknown> = {}): Promise<{ reference: string; checkoutUrl: string }> {
    const init = await s.call('POST', '/v1/transactions/initialize', { body: validInput(overrides) });
    expect(init.status, JSON.stringify(init.json)).toBe(200);
    return init.json as { reference: string; checkoutUrl: string };
  }

  const submit = (page: Page, url: string, selector: string) => Promise.all([page.waitForURL(url), page.click(selector)]);

  it('a page on another origin, or a name rebound to the service, reads and moves nothing; the pages still work from themselves', async () => {
    const open = await initialize();
    const { reference: paid } = await initialize({ customerPhone: '0900000010', merchantReference: 'paid' });
    await s.service.clock.advance(0);
    const port = new URL(s.url).port;
    const attackerPort = (attacker.address() as AddressInfo).port;
    // bypassCSP: the rebound page below is a 403 page, whose CSP would stop the attacker's script.
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    try {
      await page.goto(open.checkoutUrl);
      const state = async () => {
        await s.service.clock.advance(0);
        return JSON.stringify([s.service.transactions(), s.service.deliveries(), hook.requests.length]);
      };
      const before = await state();
      const targets = [
        `${s.url}/checkout/${open.reference}/cancel`,
        `${s.url}/checkout/${open.reference}/pay`,
        `${s.url}/_dashboard/transactions/${paid}/refund`,
      ];
      // Cross-site (evil.example) and same-site on another port (127.0.0.1): Chromium sends their Origin.
      for (const from of [`http://evil.example:${attackerPort}`, `http://127.0.0.1:${attackerPort}`]) {
        for (const to of targets) {
          const [answer] = await Promise.all([page.waitForResponse(to), page.goto(`${from}/?to=${encodeURIComponent(to)}`)]);
          expect(answer.status(), `${from} → ${to}`).toBe(403);
        }
      }
      // Rebound: evil.example on the service's port reaches the service, under a name it does not answer to.
      const rebound = `http://evil.example:${port}`;
      for (const path of ['/_dashboard', `/_dashboard/transactions/${paid}`, `/checkout/${open.reference}`]) {
        expect((await page.goto(`${rebound}${path}`))!.status(), path).toBe(403);
        expect(await page.textContent('body')).not.toContain(paid);
      }
      // A script on the rebound origin posts as that same origin.
      const posted = await page.evaluate(
        (paths) =>
          Promise.all(
            paths.map((p) => fetch(p, { method: 'POST', body: new URLSearchParams({ paymentMethod: 'telebirr' }) }).then((r) => r.status)),
          ),
        targets.map((t) => new URL(t).pathname),
      );
      expect(posted).toEqual([403, 403, 403]);
      expect(await state()).toBe(before);

      // From themselves: Pay at checkout, and Refund on the dashboard opened at localhost.
      await page.goto(open.checkoutUrl);
      await submit(page, open.checkoutUrl, '#pay');
      expect(await page.textContent('#status')).toBe('completed');
      await page.goto(`http://localhost:${port}/_dashboard/transactions/${paid}`);
      await submit(page, page.url(), '#action-refund');
      expect(await page.textContent('#status')).toBe('refunding');
    } finally {
      await context.close();
    }
  });
});
