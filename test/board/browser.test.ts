// The board as a person uses it: headless Chromium against the express example on Postgres, paid
// through the reference service, signed in with HTTP Basic auth. Each test asserts what the page shows.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirePostgres } from '@payhook/test-support/services';
import { launchChromium, runBrowserTests } from '@payhook/test-support/browser';
import { BASE, startBoardExample, type BoardExample, type Payment } from './example.js';
import { chartLoaded, factsOf, filterList, follow, idOf, openList, rowsOf, seriousViolations, tabTo } from './pages.js';

/** Screenshots, one per view: into docs/ when asked (PAYHOOK_SCREENSHOTS=1, to look at and commit), else a temporary folder. */
const DOCS =
  process.env.PAYHOOK_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../docs/board/', import.meta.url))
    : mkdtempSync(join(tmpdir(), 'payhook-board-shots-'));
const databaseUrl = runBrowserTests ? await requirePostgres() : undefined;
const HOSTILE = '<img src=x onerror=window.__pwned=1><script>window.__pwned=2</script>\u001b[2J';
const pwned = (page: Page) => page.evaluate(() => (window as { __pwned?: number }).__pwned);

describe.skipIf(!runBrowserTests || !databaseUrl)('the board in headless Chromium, on the express example and Postgres', () => {
  let ex: BoardExample;
  let browser: Browser;
  let context: BrowserContext;
  // Each test acts on payments of its own; `twice` was delivered twice (processed, then duplicate).
  let twice: Payment;
  let replayed: Payment;
  let erased: Payment;
  let keyed: Payment;
  let refused: Payment;

  beforeAll(async () => {
    ex = await startBoardExample(databaseUrl!);
    twice = await ex.pay('twice', { duplicate: true });
    replayed = await ex.pay('replayed');
    erased = await ex.pay('erased', { duplicate: true });
    keyed = await ex.pay('keyed');
    refused = await ex.payRejected('refused');
    browser = await launchChromium();
    context = await browser.newContext({
      httpCredentials: { username: 'admin', password: ex.password },
      viewport: { width: 1280, height: 800 },
    });
  }, 90_000);
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await ex?.close();
  });

  const url = (path: string) => `${ex.app.url}${BASE}${path}`;
  const deliveryOf = (page: Page, p: Payment, outcome?: string) => idOf(page, ex.app.url, p.reference, outcome);
  const filter = (page: Page, fields: Record<string, string>) => filterList(page, ex.app.url, fields);
  const notice = (page: Page) => page.textContent('main p.notice');

  it('renders the list, one delivery (facts, pretty body, every attempt) and a confirmation page', async () => {
    const page = await context.newPage();
    const paid = [twice, replayed, erased, keyed];
    await openList(page, ex.app.url, {}, (rs) => paid.every((p) => rs.some((r) => r.reference === p.reference)), 'every payment');
    expect(await page.textContent('main h2')).toBe('Deliveries');
    await chartLoaded(page);
    expect(await page.getAttribute('#chart', 'alt')).toBe('Deliveries per minute over the last hour, by outcome');

    const rows = await openList(page, ex.app.url, { reference: twice.reference }, (rs) => rs.length === 2, 'both copies');
    expect(rows.map((r) => r.outcome).sort()).toEqual(['duplicate', 'processed']);
    // Which order is this: the order id, the customer and the amount, from the kept body (issue 51).
    for (const r of rows)
      expect(r).toMatchObject({ order: twice.merchantReference, amount: '120.00 ETB', customer: expect.stringMatching(/911234567$/) });
    const processed = rows.find((r) => r.outcome === 'processed')!.id;
    await follow(page, () => page.click(`tr[data-id="${processed}"] a`), /\/deliveries\//);
    expect(await factsOf(page)).toMatchObject({
      Source: 'webhook',
      Reference: twice.reference,
      Event: 'payment.success',
      'Dead letter': 'no',
    });
    expect((await factsOf(page)).Answer).toMatch(/^processed, 200, in \d+ ms$/);
    const body = (await page.textContent('#body'))!;
    expect(JSON.parse(body)).toMatchObject({ reference: twice.reference, merchantReference: twice.merchantReference });
    expect(body).toBe(JSON.stringify(JSON.parse(body), null, 2));
    const timeline = await page.locator('#timeline li').allTextContents();
    expect(timeline).toHaveLength(2);
    // Oldest first; the two copies arrive together, so either may be first.
    expect(timeline.map((t) => /webhook payment\.success: (\w+) \(200\)/.exec(t)?.[1]).sort()).toEqual(['duplicate', 'processed']);
    expect(await page.textContent('#timeline li[aria-current="true"]')).toMatch(/: processed \(200\)/);
    expect(await page.locator('nav.actions a').allTextContents()).toEqual(['Replay…', 'Force replay…', 'Erase this payment’s records…']);

    await follow(page, () => page.click('nav.actions >> text=Replay…'), /\/confirm\?action=replay&id=/);
    // The confirmation names the payment: reference, order id and amount; the delivery below.
    expect(await page.textContent('main h2')).toBe(`Replay: payment ${twice.reference}, order ${twice.merchantReference}, 120.00 ETB?`);
    expect(await page.textContent('#subject')).toMatch(
      new RegExp(`^Delivery${processed}, received .+ UTCCustomer.*911234567Outcomeprocessed \\(200\\)$`),
    );
    expect(await page.inputValue('form.actions input[name=csrf]')).toMatch(/^[\w-]{43}$/);
    expect(await page.inputValue('form.actions input[name=id]')).toBe(processed);
    expect(await page.textContent('form.actions button[type=submit]')).toBe('Replay');
    expect(await page.getAttribute('form.actions a', 'href')).toBe(`${BASE}/deliveries/${encodeURIComponent(processed)}`);
    await page.close();
  });

  it('filters by reference, merchant reference, outcome and open dead letters', async () => {
    const page = await context.newPage();
    await deliveryOf(page, refused, 'rejected');
    const byReference = await filter(page, { reference: twice.reference });
    expect(byReference.map((r) => r.reference)).toEqual([twice.reference, twice.reference]);
    expect(await page.inputValue('input[name=reference]')).toBe(twice.reference);
    const byMerchant = await filter(page, { merchant: twice.merchantReference });
    expect(byMerchant.map((r) => r.id)).toEqual(byReference.map((r) => r.id));
    expect((await filter(page, { merchant: keyed.merchantReference })).map((r) => r.reference)).toEqual([keyed.reference]);
    const duplicates = await filter(page, { outcome: 'duplicate' });
    expect(duplicates.map((r) => [r.reference, r.outcome])).toEqual([
      [erased.reference, 'duplicate'],
      [twice.reference, 'duplicate'],
    ]);
    expect(await page.inputValue('select[name=outcome]')).toBe('duplicate');
    expect((await filter(page, { dead: 'open' })).map((r) => [r.reference, r.outcome])).toEqual([
      [refused.reference, 'rejected dead letter'],
    ]);
    expect(await page.textContent('main p.actions')).toBe('Retry all open dead letters…');
    expect(await filter(page, { reference: 'PNOSUCHREFERENCE' })).toEqual([]);
    expect(await page.textContent('#empty')).toBe('No deliveries match.');
    await page.close();
  });

  it('retries a dead letter from the board, and it closes', async () => {
    const page = await context.newPage();
    const id = await deliveryOf(page, refused, 'rejected');
    await page.goto(url(`/deliveries/${encodeURIComponent(id)}`));
    expect((await factsOf(page))['Dead letter']).toMatch(/^rejected, .+ UTC; open$/);
    await follow(page, () => page.click('nav.actions >> text=Retry dead letter…'), /action=retry&/);
    await follow(page, () => page.click('form.actions button[type=submit]'), /after=retry/);
    // The banner says what the retry did (issue 51), and links the replay.
    expect(await notice(page)).toBe('Retried: processed (200). The dead letter is closed. Open the replay.');
    expect(await page.getAttribute('main p.notice a', 'href')).toMatch(new RegExp(`^${BASE}/deliveries/`));
    mkdirSync(DOCS, { recursive: true });
    await page.screenshot({ path: join(DOCS, 'retried.png') });
    expect((await factsOf(page))['Dead letter']).toMatch(/^rejected, .+ UTC; retried by \S+$/);
    expect(await page.locator('nav.actions >> text=Retry dead letter…').count()).toBe(0);
    // The forced replay ran the shop's handler: processed.
    const rows = await openList(page, ex.app.url, { reference: refused.reference }, (rs) => rs[0]?.outcome === 'processed', 'the replay');
    // The rejection reads as resolved by the retry, no longer as a red failure.
    expect(rows[1]!.outcome).toBe('rejected resolved by a later replay dead letter, retried');
    expect(await page.locator(`tr[data-id="${rows[1]!.id}"] .outcome`).evaluateAll((s) => s.map((e) => e.className))).toEqual([
      'outcome resolved',
      'outcome resolved',
    ]);
    expect(await filter(page, { dead: 'open' })).toEqual([]);
    await page.close();
  });

  it('replays a processed delivery: the new record answers duplicate', async () => {
    const page = await context.newPage();
    const id = await deliveryOf(page, replayed);
    await follow(page, () => page.click(`tr[data-id="${id}"] a`), /\/deliveries\//);
    await follow(page, () => page.click('nav.actions >> text=Replay…'), /action=replay&/);
    await follow(page, () => page.click('form.actions button[type=submit]'), /after=replay/);
    expect(await notice(page)).toBe('Replayed: duplicate (200).');
    expect(page.url()).not.toContain(encodeURIComponent(id));
    expect((await factsOf(page)).Source).toBe(`replay, replay of ${id}`);
    await page.close();
  });

  it('erases a payment’s records', async () => {
    const page = await context.newPage();
    const rows = await openList(page, ex.app.url, { reference: erased.reference }, (rs) => rs.length === 2, 'both copies');
    await follow(page, () => page.click(`tr[data-id="${rows[0]!.id}"] a`), /\/deliveries\//);
    await follow(page, () => page.click('nav.actions >> text=Erase this payment’s records…'), /action=erase&/);
    expect(await page.textContent('main h2')).toBe(`Erase: payment ${erased.reference}, order ${erased.merchantReference}, 120.00 ETB?`);
    await follow(page, () => page.click('form.actions button.danger'), /erased=2/);
    expect(await notice(page)).toBe('Erased 2 records.');
    expect(await filter(page, { reference: erased.reference })).toEqual([]);
    expect(await page.isVisible('#empty')).toBe(true);
    await page.close();
  });

  it('erases one customer’s records, found by phone in the kept bodies, and no one else’s', async () => {
    const [first, second] = [await ex.pay('customer-1', { phone: '0911999888' }), await ex.pay('customer-2', { phone: '0911999888' })];
    const page = await context.newPage();
    await openList(page, ex.app.url, {}, (rs) => rs.some((r) => r.reference === second.reference), 'both of the customer’s payments');
    await page.click('details.erase summary');
    await page.fill('details.erase input[name=phone]', '+251 911 999 888');
    await follow(page, () => page.click('details.erase button[type=submit]'), /action=erase-customer&/);
    expect(await page.textContent('main h2')).toBe('Erase: customer +251 911 999 888?');
    await follow(page, () => page.click('form.actions button.danger'), /erased=2/);
    expect(await notice(page)).toBe('Erased 2 records.');
    for (const p of [first, second]) expect(await filter(page, { reference: p.reference })).toEqual([]);
    expect((await filter(page, { reference: keyed.reference })).length).toBeGreaterThan(0);
    await page.close();
  });

  it('adds a new delivery to an open list without a reload', async () => {
    const page = await context.newPage();
    await page.goto(url('/'));
    const before = (await rowsOf(page)).length;
    let navigations = 0;
    page.on('framenavigated', (frame) => void (frame === page.mainFrame() && navigations++));
    await page.evaluate(() => Object.assign(window, { __stayed: true }));
    const paid = await ex.pay('live');
    const row = page.locator('#deliveries tbody tr[data-id]', { hasText: paid.reference });
    await row.waitFor({ timeout: 10_000 });
    const rows = await rowsOf(page);
    expect(rows).toHaveLength(before + 1);
    expect(rows[0]).toMatchObject({ reference: paid.reference, outcome: 'processed', order: paid.merchantReference, amount: '120.00 ETB' });
    expect(await page.textContent('#live-status')).toBe('1 new delivery since the page loaded.');
    expect(navigations).toBe(0);
    expect(await page.evaluate(() => (window as { __stayed?: boolean }).__stayed)).toBe(true);
    // The script builds the row a reload shows, cell for cell (the server's badges add a title).
    const cellsOf = (id: string) => page.$eval(`tr[data-id="${id}"]`, (tr) => tr.innerHTML.replace(/ title="[^"]*"/g, ''));
    const live = await cellsOf(rows[0]!.id);
    await page.reload();
    expect(await cellsOf(rows[0]!.id)).toBe(live);
    await page.close();
  });

  it('fits a phone: at 390 px the list stacks its rows, each value named, with no page-wide horizontal scroll', async () => {
    const phone = await browser.newContext({
      httpCredentials: { username: 'admin', password: ex.password },
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    const page = await phone.newPage();
    const rows = await openList(page, ex.app.url, {}, (rs) => rs.some((r) => r.reference === keyed.reference), 'the payments');
    await chartLoaded(page);
    const wide = () => page.evaluate(() => document.documentElement.scrollWidth);
    expect(await wide()).toBeLessThanOrEqual(390);
    const first = page.locator(`tr[data-id="${rows.find((r) => r.reference === keyed.reference)!.id}"]`);
    expect(
      await first
        .locator('td[data-label=Order]')
        .evaluate((td) => [getComputedStyle(td).display, getComputedStyle(td, '::before').content]),
    ).toEqual(['block', '"Order"']);
    expect(await first.locator('td[data-label=Order] .value').textContent()).toBe(keyed.merchantReference);
    expect(await first.locator('td[data-label=Amount]').isVisible()).toBe(true);
    expect(await page.isVisible('#deliveries thead')).toBe(false);
    mkdirSync(DOCS, { recursive: true });
    await page.screenshot({ path: join(DOCS, 'list-phone.png') });
    // One delivery and its confirmation fit too.
    const id = rows.find((r) => r.reference === keyed.reference)!.id;
    for (const path of [`/deliveries/${encodeURIComponent(id)}`, `/confirm?action=replay&id=${encodeURIComponent(id)}`]) {
      await page.goto(url(path));
      expect(await wide(), path).toBeLessThanOrEqual(390);
    }
    await phone.close();
  });

  it('passes axe (nothing serious or critical) on the list, a delivery and a confirmation, and replays by keyboard alone', async () => {
    const page = await context.newPage();
    const id = await deliveryOf(page, keyed);
    const views = {
      list: url('/'),
      delivery: url(`/deliveries/${encodeURIComponent(id)}`),
      confirmation: url(`/confirm?action=replay&id=${id}`),
    };
    for (const [name, at] of Object.entries(views)) {
      await page.goto(at);
      const found = await seriousViolations(page);
      expect(found, `axe on the ${name} page:\n${found.join('\n')}`).toEqual([]);
    }
    await page.goto(views.delivery);
    await tabTo(page, 'Replay…');
    await follow(page, () => page.keyboard.press('Enter'), /action=replay&/);
    await tabTo(page, 'Replay');
    await follow(page, () => page.keyboard.press('Enter'), /after=replay/);
    expect(await notice(page)).toBe('Replayed: duplicate (200).');
    await page.close();
  });

  it('saves a screenshot of each view for the docs', async () => {
    const page = await context.newPage();
    mkdirSync(DOCS, { recursive: true });
    const id = await deliveryOf(page, twice);
    await page.goto(url('/'));
    await chartLoaded(page);
    await page.screenshot({ path: join(DOCS, 'list.png') });
    await page.goto(url(`/deliveries/${encodeURIComponent(id)}`));
    await page.screenshot({ path: join(DOCS, 'delivery.png') });
    await page.goto(url(`/confirm?action=replay&id=${encodeURIComponent(id)}`));
    await page.screenshot({ path: join(DOCS, 'confirm.png') });
    for (const name of ['list', 'delivery', 'confirm', 'list-phone', 'retried'])
      expect(readFileSync(join(DOCS, `${name}.png`)).toString('latin1', 1, 4)).toBe('PNG');
    await page.close();
  });

  it('shows a stranger’s markup and terminal escapes as text, and runs none of it', async () => {
    const body = JSON.stringify({ reference: HOSTILE, event: '<script>window.__pwned=2</script>', merchantReference: HOSTILE });
    const res = await fetch(`${ex.app.url}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(401);
    const shown = HOSTILE.replace('\u001b', '\\x1b'); // control characters are written out
    const page = await context.newPage();
    const rows = await openList(page, ex.app.url, {}, (rs) => rs.some((r) => r.reference === shown), 'the refusal');
    const row = page.locator(`tr[data-id="${rows.find((r) => r.reference === shown)!.id}"]`);
    expect(await row.locator('td.value').isVisible()).toBe(true);
    expect(await row.locator('td[data-label=Event]').textContent()).toBe('<script>window.__pwned=2</script>');
    expect(await row.locator('td[data-label=Order]').textContent()).toBe('refused: body never parsed');
    expect(await page.locator('img[src=x], main script').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();

    await follow(page, () => row.locator('a').click(), /\/deliveries\//);
    expect(await factsOf(page)).toMatchObject({ Reference: shown, Event: '<script>window.__pwned=2</script>' });
    expect((await factsOf(page)).Answer).toMatch(/^unauthorized, 401/);
    // The body as sent: JSON writes the ESC as \u001b; the parsed reference above holds the character itself.
    expect(await page.textContent('#prefix')).toMatch(/^\{"reference":"<img src=x onerror=window\.__pwned=1>/);
    expect(await page.evaluate(() => (document.body.textContent ?? '').includes('\u001b'))).toBe(false);
    expect(await page.locator('nav.actions >> text=Replay…').count()).toBe(0);
    expect(await page.locator('img[src=x], main script').count()).toBe(0);
    expect(await pwned(page)).toBeUndefined();
    await page.close();
  });

  it('adds a refused delivery live with the sender’s controls written out, as a reload shows it (§3.1)', async () => {
    const page = await context.newPage();
    await page.goto(url('/'));
    const tag = Math.random().toString(36).slice(2, 8);
    const reference = `P\u202eLIVE-${tag}\u001b[2J\u0007`;
    const written = `P\\u202eLIVE-${tag}\\x1b[2J\\x07`;
    const body = JSON.stringify({ reference, event: 'payment.success\u202e' });
    const res = await fetch(`${ex.app.url}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(401);
    const row = page.locator('#deliveries tbody tr.new', { hasText: `LIVE-${tag}` });
    await row.waitFor({ timeout: 10_000 });
    const shown = { reference: written, event: 'payment.success\\u202e', order: 'refused: body never parsed' };
    const cells = async () => ({
      reference: await row.locator('td[data-label=Reference]').textContent(),
      event: await row.locator('td[data-label=Event]').textContent(),
      order: await row.locator('td[data-label=Order]').textContent(),
    });
    expect(await cells()).toEqual(shown);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: these raw characters are what must not reach the page
    expect(await page.evaluate(() => /[\u202e\u001b\u0007]/.test(document.body.textContent ?? ''))).toBe(false);
    await page.reload();
    await page.locator('#deliveries tbody tr', { hasText: `LIVE-${tag}` }).waitFor();
    const reloaded = page.locator('#deliveries tbody tr', { hasText: `LIVE-${tag}` });
    expect(await reloaded.locator('td[data-label=Reference]').textContent()).toBe(shown.reference);
    expect(await reloaded.locator('td[data-label=Event]').textContent()).toBe(shown.event);
    await page.close();
  });
});
