import { createReferenceService } from '@payhook/reference';
import { afterEach, describe, expect, it } from 'vitest';
import { errorPage, html, page, seeOther } from '../../src/pages/html.js';
import { merchants, receiver, start, type Started } from '@payhook/test-support/apps/reference-service';

// The dashboard's list (filters, pages), its reloading while deliveries are under way, and the
// checkout's heading, read as HTML over HTTP. browser.test.ts drives them in Chromium.
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function started(options: Parameters<typeof start>[0] = {}): Promise<Started> {
  const s = await start(options);
  cleanup.push(s.close);
  return s;
}

async function get(s: Started, path: string): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(s.url + path);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** The references listed, in order. */
const listed = (text: string) =>
  [...text.matchAll(/<a href="\/_dashboard\/transactions\/([^"]+)">/g)].map((m) => decodeURIComponent(m[1]!));
/** A link's href by its id, unescaped as a browser reads it. */
const link = (text: string, id: string) => new RegExp(`id="${id}" href="([^"]+)"`).exec(text)?.[1]?.replaceAll('&amp;', '&');
const refresh = (text: string) => /<meta http-equiv="refresh" content="(\d+)">/.exec(text)?.[1];
const sandbox = (s: Started, reference: string, action: string) => s.call('POST', `/_sandbox/transactions/${reference}/${action}`);

describe('dashboard list', () => {
  it('shows 20 a page, newest first, with Older and Newer links that stay put while transactions come in', async () => {
    const s = await started();
    const made: string[] = [];
    for (let i = 0; i < 45; i++) made.push(await s.initialize({ merchantReference: `o-${i}` }));
    const newestFirst = [...made].reverse();

    const first = await get(s, '/_dashboard');
    expect(listed(first.text)).toEqual(newestFirst.slice(0, 20));
    expect(first.text).toContain('<span id="showing">1–20 of 45</span>');
    expect(link(first.text, 'newer')).toBeUndefined();
    const olderLink = link(first.text, 'older')!;
    expect(olderLink).toMatch(/^\/_dashboard\?before=/);

    // A new transaction does not shift the next page.
    const latest = await s.initialize({ merchantReference: 'o-late' });
    const second = await get(s, olderLink);
    expect(listed(second.text)).toEqual(newestFirst.slice(20, 40));
    const third = await get(s, link(second.text, 'older')!);
    expect(listed(third.text)).toEqual(newestFirst.slice(40));
    expect(third.text).toContain('<span id="showing">42–46 of 46</span>');
    expect(link(third.text, 'older')).toBeUndefined();

    const back = await get(s, link(third.text, 'newer')!);
    expect(listed(back.text)).toEqual(newestFirst.slice(20, 40));
    // The page above is the one seen first; the one above that, short of a page, is the newest full page.
    const above = await get(s, link(back.text, 'newer')!);
    expect(listed(above.text)).toEqual(newestFirst.slice(0, 20));
    expect(above.text).toContain('<span id="showing">2–21 of 46</span>');
    const top = await get(s, link(above.text, 'newer')!);
    expect(listed(top.text)).toEqual([latest, ...newestFirst.slice(0, 19)]);
    expect(link(top.text, 'newer')).toBeUndefined();
  });

  it('filters by status and by part of a reference or merchant reference, any case; the pages keep the filters', async () => {
    const s = await started();
    const a = await s.initialize({ merchantReference: 'order-A1' });
    const b = await s.initialize({ merchantReference: 'order-B2' });
    const c = await s.initialize({ merchantReference: 'ORDER-a3' });
    await sandbox(s, a, 'pay');
    await sandbox(s, c, 'pay');

    expect(listed((await get(s, '/_dashboard?status=completed')).text)).toEqual([c, a]);
    expect(listed((await get(s, '/_dashboard?q=order-a')).text)).toEqual([c, a]);
    expect(listed((await get(s, `/_dashboard?q=${b.slice(3, 12).toLowerCase()}`)).text)).toEqual([b]);
    expect(listed((await get(s, '/_dashboard?status=pending&q=ORDER-A')).text)).toEqual([]);
    const none = await get(s, '/_dashboard?status=pending&q=ORDER-A');
    expect(none.text).toContain('No transactions match these filters.');
    // The form shows the filters chosen; what came from the URL is escaped.
    const hostile = await get(s, `/_dashboard?status=completed&q=${encodeURIComponent('"><script>x</script>')}`);
    expect(hostile.status).toBe(200);
    expect(hostile.text).toContain('<option value="completed" selected>completed</option>');
    expect(hostile.text).toContain('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
    expect(hostile.text).not.toContain('<script>');

    for (let i = 0; i < 21; i++) await sandbox(s, await s.initialize({ merchantReference: `paid-${i}` }), 'pay');
    const firstPage = await get(s, '/_dashboard?status=completed&q=paid-');
    expect(listed(firstPage.text)).toHaveLength(20);
    const older = link(firstPage.text, 'older')!;
    expect(older).toMatch(/^\/_dashboard\?status=completed&q=paid-&before=/);
    expect(listed((await get(s, older)).text)).toEqual([expect.any(String)]);
  });

  it('answers bad query values with a readable 400 page, never a 500', async () => {
    const s = await started();
    for (let i = 0; i < 21; i++) await s.initialize();
    const cases: [string, RegExp][] = [
      [
        `/_dashboard?status=${encodeURIComponent('<b>paid</b>')}`,
        /There is no transaction status “&lt;b&gt;paid&lt;\/b&gt;”: filter by one of pending, processing/,
      ],
      [`/_dashboard?q=${'x'.repeat(101)}`, /The search is 101 characters long: search at most 100/],
      ['/_dashboard?before=not-a-cursor', /This page link is not valid/],
      ['/_dashboard?before=a.b&after=a.b', /either before or after, not both/],
    ];
    for (const [path, message] of cases) {
      const res = await get(s, path);
      expect([res.status, res.type]).toEqual([400, 'text/html; charset=utf-8']);
      expect(res.text).toMatch(message);
      expect(res.text).toMatch(/<a id="start-again" href="\/_dashboard(\?[^"]*)?">/);
    }
    expect((await get(s, `/_dashboard?status=${encodeURIComponent('<b>paid</b>')}`)).text).not.toContain('<b>');
    // A page link is good only for the filters it was made for, and for a while (the service clock's).
    const older = link((await get(s, '/_dashboard')).text, 'older')!;
    expect((await get(s, older)).status).toBe(200);
    const otherFilters = await get(s, older.replace('before=', 'status=pending&before='));
    expect([otherFilters.status, otherFilters.text]).toEqual([400, expect.stringMatching(/made for other filters/)]);
    expect(otherFilters.text).toContain('<a id="start-again" href="/_dashboard?status=pending">');
    await s.service.clock.advance(16 * 60_000);
    expect((await get(s, older)).text).toMatch(/This page link has expired/);
    // Names the list does not use (a page number) are ignored: the newest page.
    const numbered = await get(s, '/_dashboard?page=abc');
    expect([numbered.status, listed(numbered.text)]).toEqual([200, expect.any(Array)]);
    expect(listed(numbered.text)).toHaveLength(20);
  });
});

describe('pages follow their deliveries', () => {
  it('reload themselves every second while an attempt is in flight, then stop', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const hook = await receiver(async (_n, _req, res) => {
      await held;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"outcome":"processed"}');
    });
    cleanup.push(hook.close);
    const s = await started({ allowHttpCallbacks: true, merchants: merchants(hook.url) });
    const reference = await s.initialize();
    const quiet = await get(s, `/_dashboard/transactions/${reference}`);
    expect(refresh(quiet.text)).toBeUndefined();
    expect(quiet.text).not.toContain('id="refreshing"');

    await sandbox(s, reference, 'pay');
    const pending = await get(s, `/_dashboard/transactions/${reference}`);
    expect(pending.text).toContain('<span class="state">pending</span>');
    expect(refresh(pending.text)).toBe('1');
    expect(pending.text).toContain('id="refreshing"');
    expect(refresh((await get(s, '/_dashboard')).text)).toBe('1');

    release();
    await s.service.clock.advance(0);
    const delivered = await get(s, `/_dashboard/transactions/${reference}`);
    expect(delivered.text).toContain('<span class="state">delivered</span>');
    expect(refresh(delivered.text)).toBeUndefined();
    expect(refresh((await get(s, '/_dashboard')).text)).toBeUndefined();
  });

  it('wait for a scheduled retry on the service clock, at most a minute', async () => {
    const hook = await receiver((n, _req, res) => void res.writeHead(n === 1 ? 503 : 200).end());
    cleanup.push(hook.close);
    const s = await started({ allowHttpCallbacks: true, merchants: merchants(hook.url) });
    const reference = await s.initialize();
    await sandbox(s, reference, 'pay');
    await s.service.clock.advance(0);
    const path = `/_dashboard/transactions/${reference}`;
    expect((await get(s, path)).text).toContain('<span class="state">retrying</span>');
    expect(refresh((await get(s, path)).text)).toBe('60');
    await s.service.clock.advance(45_000);
    expect(refresh((await get(s, path)).text)).toBe('15');
    await s.service.clock.advance(15_000);
    expect(refresh((await get(s, path)).text)).toBeUndefined();
    expect(hook.requests).toHaveLength(2);
  });
});

describe('checkout heading', () => {
  it("names the amount and the merchant's name, escaped; the merchant made by default is Demo shop", async () => {
    const s = await started();
    const shop = await get(s, `/checkout/${await s.initialize({ amount: '250.00' })}`);
    expect(shop.text).toContain('<h1>Pay <strong id="amount">250.00 ETB</strong> to <span id="merchant">Shop &lt;Test&gt;</span></h1>');

    const service = createReferenceService({ clock: 'manual' });
    const headers = { authorization: `Bearer ${service.generated!.apiKey}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ amount: '100.00', currencyCode: 'ETB', customerPhone: '0912345678', merchantReference: 'order-1' });
    const init = await (
      await service.fetch(new Request('http://127.0.0.1/v1/transactions/initialize', { method: 'POST', headers, body }))
    ).json();
    const page = await (await service.fetch(new Request(`http://127.0.0.1/checkout/${init.reference}`))).text();
    expect(page).toContain('<h1>Pay <strong id="amount">100.00 ETB</strong> to <span id="merchant">Demo shop</span></h1>');
    service.close();
  });
});

// The pieces every page is made of (src/pages/html.ts): what a stranger's text becomes, and the headers each page carries.
describe('the html tag and the page around it', () => {
  it('escapes each of & < > " \' in what is interpolated, renders arrays whole, and nothing for null, undefined and false', () => {
    const hostile = `<img src=x onerror='a("b")'>&amp;`;
    expect(html`<p title="${hostile}">${hostile}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&#39;a(&quot;b&quot;)&#39;&gt;&amp;amp;">&lt;img src=x onerror=&#39;a(&quot;b&quot;)&#39;&gt;&amp;amp;</p>',
    );
    expect(html`<ul>${['<a>', html`<li>b</li>`, ['c', 0]]}</ul>`.value).toBe('<ul>&lt;a&gt;<li>b</li>c0</ul>');
    expect(html`[${null}|${undefined}|${false}|${0}|${true}|${''}]`.value).toBe('[|||0|true|]');
    // Markup made by the tag reads as itself wherever it is turned into a string.
    const made = html`<b>${'<i>'}</b>`;
    expect([String(made), `${made}`]).toEqual(['<b>&lt;i&gt;</b>', '<b>&lt;i&gt;</b>']);
  });

  it('serves a page with a policy that allows no script, no sniffing and no caching; it reloads only when asked', async () => {
    const res = page('A <title>', html`<p>${'body'}</p>`);
    expect(res.status).toBe(200);
    expect(Object.fromEntries(res.headers)).toEqual({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
    const text = await res.text();
    expect(text).toMatch(
      /^<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" [^>]*><title>A &lt;title&gt;<\/title><style>/,
    );
    expect(text).not.toContain('http-equiv');
    // The style sheet styles what the pages mark: the boxes, the errors, the hints.
    const style = /<style>(.*)<\/style>/s.exec(text)?.[1] ?? '';
    for (const rule of ['.box{', '.error{', '.hint{', '.status{']) expect(style).toContain(rule);
    expect(text).toMatch(/<\/style><\/head><body><p>body<\/p><\/body><\/html>$/);
    const refreshing = await page('t', html``, 202, 0.2).text();
    expect(/<meta http-equiv="refresh" content="([^"]*)">/.exec(refreshing)?.[1]).toBe('1');
  });

  it('sends a form post on with a 303 to where it goes, and an error as a readable page with its status', async () => {
    const moved = seeOther('/checkout/T1?error=declined');
    expect([moved.status, moved.headers.get('location'), await moved.text()]).toEqual([303, '/checkout/T1?error=declined', '']);
    const missing = errorPage(404, 'Not <found>', html`No ${'<T1>'}: check the link.`);
    expect([missing.status, missing.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
    expect(await missing.text()).toContain(
      '<div class="box"><h1>Not &lt;found&gt;</h1><p id="message">No &lt;T1&gt;: check the link.</p></div>',
    );
  });
});
