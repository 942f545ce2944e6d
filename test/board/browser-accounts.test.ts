// A platform's board in headless Chromium (issue 50): account A's staff see A's rows only, on the
// page and as they arrive live, while B's deliveries come in beside them. A memory ledger: the
// accounts' scoping over Postgres is tested over HTTP in packages/board/test/accounts-*.test.ts.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventBody } from '@payhook/test-support/apps/board-app';
import { startPlatformApp, type PlatformApp } from '@payhook/test-support/apps/platform-app';
import { launchChromium, runBrowserTests } from '@payhook/test-support/browser';
import { BASE } from './example.js';
import { rowsOf } from './pages.js';

describe.skipIf(!runBrowserTests)("a platform's board in headless Chromium", () => {
  let app: PlatformApp;
  let browser: Browser;
  beforeAll(async () => {
    app = await startPlatformApp();
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("shows A's staff A's rows only, and adds A's new deliveries live, never B's", async () => {
    for (const [account, reference] of [
      ['acct_A', 'ref_same'],
      ['acct_B', 'ref_same'],
      ['acct_B', 'ref_b1'],
      ['acct_A', 'ref_a1'],
    ] as const)
      await app.deliver(account, eventBody(reference));
    // authorize reads the viewer from this header (packages/board/test/platform-app.ts); the live stream sends it too.
    const context = await browser.newContext({ extraHTTPHeaders: { 'x-viewer': 'ann' } });
    const page = await context.newPage();
    await page.goto(`${app.origin}${BASE}/`);
    expect(await page.textContent('header #account')).toBe('acct_A');
    expect(await page.locator('th', { hasText: 'Account' }).count()).toBe(0);
    const a = await app.idsOf('acct_A');
    expect((await rowsOf(page)).map((r) => [r.id, r.reference])).toEqual([
      [a[0], 'ref_a1'],
      [a[1], 'ref_same'],
    ]);

    await app.deliver('acct_B', eventBody('ref_b_live'));
    await app.deliver('acct_A', eventBody('ref_a_live'));
    await page.locator('#deliveries tbody tr[data-id]', { hasText: 'ref_a_live' }).waitFor({ timeout: 10_000 });
    await page.waitForTimeout(200); // ten more looks at the ledger: B's row would have come by now
    const rows = await rowsOf(page);
    expect(rows.map((r) => r.reference)).toEqual(['ref_a_live', 'ref_a1', 'ref_same']);
    expect(rows.map((r) => r.id)).toEqual(await app.idsOf('acct_A'));
    expect(await page.textContent('#live-status')).toBe('1 new delivery since the page loaded.');
    await context.close();
  });
});
