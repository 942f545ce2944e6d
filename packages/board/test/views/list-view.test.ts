import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LedgerEntry } from '@payhook/core';
import { OUTCOMES, type DeliveryOutcome } from '@payhook/core/lifecycle';
import { BASE, boardApps, eventBody } from '@payhook/test-support/apps/board-app';
import { platformApps } from '@payhook/test-support/apps/platform-app';

// Issue 52: what a merchant's support staff see and can do on the deliveries list.
const start = boardApps();
const startPlatform = platformApps();
const T0 = Date.UTC(2026, 10, 27, 5, 0, 0);
const zone = process.env.TZ;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0 + 60_000);
  // A zone off UTC: a time field without one must still be read as UTC.
  process.env.TZ = 'Asia/Kolkata';
});
afterEach(() => {
  vi.useRealTimers();
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

type App = { board: { fetch(request: Request): Promise<Response> } };
const get = async (app: App, path: string, viewer?: string) =>
  (await app.board.fetch(new Request(`http://shop.example${path}`, { headers: viewer ? { 'x-viewer': viewer } : {} }))).text();
/** A record as the receiver writes it, `i` seconds after T0. */
const entry = (i: number, fields: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id: `d_${String(i).padStart(5, '0')}`,
  receivedAt: T0 + i * 1000,
  source: 'webhook',
  reference: `ref_${i}`,
  event: 'payment.success',
  outcome: 'processed',
  status: 200,
  durationMs: 3.2,
  attempt: 1,
  signature: 'valid',
  ...fields,
});
const amp = (s: string) => s.replaceAll('&', '&amp;');
const href = (path: string, q: Record<string, string>) =>
  amp(`${BASE}${path === '/' ? '' : path}${Object.keys(q).length ? `?${new URLSearchParams(q)}` : ''}`);
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": '#39' }[c]};`);
const badge = (o: DeliveryOutcome, tone: string) => `<span class="outcome ${tone}" title="${esc(OUTCOMES[o].description)}">${o}</span>`;
const ids = (page: string) => [...page.matchAll(/<tr data-id="([^"]+)"/g)].map((m) => m[1]);
const next = (page: string) => /rel="next" href="([^"]+)"/.exec(page)?.[1];
const outcomeSelect = (chosen: string) =>
  `<select name="outcome"><option value="">any</option>${Object.keys(OUTCOMES)
    .map((o) => `<option value="${o}"${o === chosen ? ' selected' : ''}>${o}</option>`)
    .join('')}</select>`;

describe('the deliveries list', () => {
  it("shows each record's columns from the ledger, what a stranger sent as text", async () => {
    const app = await start();
    const hostile = `<b>"r"&'</b>`;
    const late = entry(1, { reference: hostile, source: 'replay', outcome: 'accepted', status: 202, attempt: 2, durationMs: 12.6 });
    late.late = { outcome: 'processed', durationMs: 5 };
    const dead = entry(2, { reference: undefined, attempt: undefined, outcome: 'malformed', status: 400, signature: 'not-checked' });
    dead.deadLetter = { reason: 'rejected', at: T0, retriedBy: 'd_00009' };
    const odd = entry(3, { outcome: 'mystery' as DeliveryOutcome, event: undefined });
    await app.receiver.store.ledger!.append([late, dead, odd]);
    const page = await get(app, `${BASE}/`);
    expect(page).toContain('<title>Deliveries · payhook</title>');
    expect(ids(page)).toEqual([odd.id, dead.id, late.id]);
    expect(page).toContain(
      '<thead><tr><th scope="col">Received</th><th scope="col">Reference</th><th scope="col">Order</th><th scope="col">Amount</th><th scope="col">Event</th><th scope="col">Outcome</th><th scope="col">Status</th><th scope="col">Attempt</th><th scope="col">Signature</th><th scope="col">Took</th></tr></thead>',
    );
    expect(page).toContain(
      `<tr data-id="${late.id}"><td data-label="Received"><a href="${BASE}/deliveries/${late.id}">2026-11-27 05:00:01 UTC</a></td><td class="value" data-label="Reference">${esc(hostile)}</td><td class="order" data-label="Order"><span class="muted">body not kept</span></td><td class="num" data-label="Amount"></td><td data-label="Event">payment.success · replay</td><td data-label="Outcome">${badge('accepted', 'warn')} → ${badge('processed', 'good')}</td><td class="num" data-label="Status">${late.status}</td><td class="num" data-label="Attempt">${late.attempt}</td><td data-label="Signature">valid</td><td class="num" data-label="Took">13 ms</td></tr>`,
    );
    expect(page).toContain(
      `<td class="value" data-label="Reference"><span class="muted">none</span></td><td class="order" data-label="Order"><span class="muted">refused: body never parsed</span></td><td class="num" data-label="Amount"></td><td data-label="Event">payment.success</td><td data-label="Outcome">${badge('malformed', 'bad')} <span class="outcome resolved">dead letter, retried</span></td><td class="num" data-label="Status">${dead.status}</td><td class="num" data-label="Attempt"></td><td data-label="Signature">not-checked</td>`,
    );
    expect(page).toContain(`<td data-label="Event"></td><td data-label="Outcome"><span class="outcome " title="">mystery</span></td>`);
    expect(page).not.toContain('<b>');
    expect(page).not.toMatch(/id="empty"|class="notice|role="alert"|rel="next"|>Newest</);
    expect(page).toContain(
      `aria-live="polite"></p>\n\n<div class="rows"><table id="deliveries" data-live="${href('/live', { after: odd.id })}"><caption`,
    );
  });

  it('applies each filter, keeps it filled in, and keeps it in the pager, chart and live links', async () => {
    const app = await start({ pageSize: 2 });
    const ledger = app.receiver.store.ledger!;
    const rows = [1, 2, 3, 4, 5, 6, 7].map((i) => entry(i, { reference: 'ref_k', outcome: 'duplicate' }));
    const noise = [entry(8, { outcome: 'duplicate' }), entry(9, { reference: 'ref_k', event: 'payment.failed', outcome: 'duplicate' })];
    await ledger.append([...rows, ...noise, entry(10, { reference: 'ref_k' })]);
    // From 05:00:02 (no zone: UTC) to before 05:00:06, as the form's datetime-local fields send them.
    const filters = {
      reference: 'ref_k',
      event: 'payment.success',
      outcome: 'duplicate',
      since: '2026-11-27T05:00:02',
      until: '2026-11-27T05:00:06Z',
    };
    const want = (
      await ledger.list({ reference: 'ref_k', event: 'payment.success', outcome: 'duplicate', since: T0 + 2000, until: T0 + 6000 })
    ).map((e) => e.id);
    expect(want).toHaveLength(4);
    const query = new URLSearchParams({ ...filters, reference: ' ref_k ', account: 'acct_B' });
    const first = await get(app, `${BASE}/?${query}`);
    expect(ids(first)).toEqual(want.slice(0, 2));
    expect(first).not.toMatch(/role="alert"|class="notice/);
    // The same times with a zone of their own.
    const zoned = { ...filters, since: '2026-11-27T10:30:02+05:30', until: '2026-11-27T05:00:06z' };
    const zonedPage = await get(app, `${BASE}/?${new URLSearchParams(zoned)}`);
    expect(ids(zonedPage)).toEqual(want.slice(0, 2));
    expect(zonedPage).not.toContain('role="alert"');
    // Each field as it was sent, trimmed.
    for (const field of [
      `<form class="filters" method="get" action="${BASE}" role="search" aria-label="Filter deliveries">\n\n<label>Reference<input name="reference" value="ref_k" maxlength="128"></label>`,
      '<label>Merchant reference<input name="merchant" value="" maxlength="128"></label>',
      '<label>Event<input name="event" value="payment.success" maxlength="128" placeholder="payment.success"></label>',
      outcomeSelect('duplicate'),
      `<label>From (UTC)<input name="since" type="datetime-local" step="1" value="${filters.since}"></label>`,
      `<label>Before (UTC)<input name="until" type="datetime-local" step="1" value="${filters.until}"></label>`,
      '<select name="dead"><option value="">any record</option><option value="open">open dead letters only</option></select>',
      `<button type="submit">Filter</button> <a href="${BASE}">Clear</a>`,
      `<img id="chart" class="chart" src="${href('/chart.svg', filters)}" alt="Deliveries per minute over the last hour, by outcome" width="600" height="158">`,
      `<table id="deliveries" data-live="${href('/live', { ...filters, after: want[0]! })}"><caption`,
      `<script src="${BASE}/assets/board.js" defer></script>`,
      `<nav class="pager" aria-label="Pages"><a rel="next" href="${href('/', { ...filters, before: want[1]! })}">Older deliveries</a></nav>`,
    ])
      expect(first).toContain(field);
    expect(first).not.toContain('name="account"');
    const second = await get(app, next(first)!.replaceAll('&amp;', '&'));
    expect(ids(second)).toEqual(want.slice(2, 4));
    expect(second).toContain(`<nav class="pager" aria-label="Pages"><a href="${href('/', filters)}">Newest</a></nav>`);
    expect(second).not.toMatch(/<img id="chart"|data-live|<script/);
    expect(second).toContain('</form>\n\n\n<p id="live-status"');
    expect(second).toContain('<table id="deliveries"><caption');
  });

  it('says what is not understood, and filters by what is', async () => {
    const app = await start();
    await app.receiver.store.ledger!.append([entry(1), entry(2)]);
    const page = await get(app, `${BASE}/?outcome=nope&since=${'x'.repeat(200)}&until=2026-11-27T10:30:02%2B0530`);
    expect(page).toContain('<p class="notice error" role="alert">&quot;nope&quot; is not an outcome payhook gives.</p>');
    expect(page).toContain(`&quot;${'x'.repeat(128)}&quot; is not a time; use the form&#39;s date and time fields.`);
    expect(page).toContain('&quot;2026-11-27T10:30:02+0530&quot; is not a time');
    expect(page).toContain(outcomeSelect(''));
    expect(ids(page)).toEqual(['d_00002', 'd_00001']);
  });

  it('pages by pageSize: no older page when the records fill the page exactly', async () => {
    const app = await start({ pageSize: 2 });
    await app.receiver.store.ledger!.append([entry(1), entry(2)]);
    const page = await get(app, `${BASE}/`);
    expect(ids(page)).toEqual(['d_00002', 'd_00001']);
    expect(page).toContain('<nav class="pager" aria-label="Pages"></nav>');
  });

  it('offers to retry the open dead letters shown, an empty state, and erasure to who may act', async () => {
    const app = await start();
    const dead = entry(1, { outcome: 'rejected' });
    dead.deadLetter = { reason: 'rejected', at: T0 };
    await app.receiver.store.ledger!.append([dead, entry(2)]);
    const open = await get(app, `${BASE}/?dead=open`);
    expect(ids(open)).toEqual([dead.id]);
    expect(open).toContain(`${badge('rejected', 'bad')} <span class="outcome bad">dead letter</span></td>`);
    expect(open).toContain('<option value="open" selected>open dead letters only</option>');
    expect(open).toContain(`<p class="actions"><a href="${BASE}/confirm?action=retry-all">Retry all open dead letters…</a></p>`);
    const erase = `<details class="erase"><summary>Erase a customer’s records</summary>\n<form method="get" action="${BASE}/confirm" class="filters"><input type="hidden" name="action" value="erase-customer">\n<label>Email`;
    expect(open).toContain(erase);
    expect(await get(app, `${BASE}/`)).not.toContain('Retry all');
    const none = await get(app, `${BASE}/?dead=open&reference=ref_2`);
    expect(none).toContain('<p id="empty">No deliveries match.</p>');
    expect(none).toContain(`<table id="deliveries" data-live="${href('/live', { reference: 'ref_2', dead: 'open' })}" hidden>`);
    expect(none).not.toContain('Retry all');
    expect(open).not.toContain('id="empty"');

    const ro = await start({ readOnly: true, live: { maxOpen: 0 } });
    await ro.receiver.store.ledger!.append([dead]);
    const seen = await get(ro, `${BASE}/?dead=open`);
    expect(ids(seen)).toEqual([dead.id]);
    expect(seen).toContain('<span class="who">ada@shop.example (read-only)</span>');
    expect(seen).not.toMatch(/Retry all|class="erase"|data-live|<script/);
    expect(seen).toContain('<nav class="pager" aria-label="Pages"></nav>\n</main>');
  });

  it('says what the last action did, from the numbers its redirect carried', async () => {
    const app = await start();
    const notice = async (q: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(await get(app, `${BASE}/?${q}`))?.[1];
    expect(await notice('erased=1')).toBe('Erased 1 record.');
    expect(await notice('erased=12&retried=3')).toBe('Erased 12 records.');
    expect(await notice('retried=1')).toBe('Retried 1 dead letter: 0 closed.');
    expect(await notice('retried=3&closed=2')).toBe('Retried 3 dead letters: 2 closed.');
    // After "retry all": what the replays answered, in a fixed order, then how many letters closed (issue 51).
    expect(await notice('retried=6&closed=3&pending=1&again=2&duplicate=1&processed=2')).toBe(
      'Retried 6 dead letters: 2 processed, 1 duplicate, 2 failed again, 1 not settled yet; 3 closed.',
    );
    expect(await notice('retried=2&closed=0&again=2&processed=x')).toBe('Retried 2 dead letters: 2 failed again; 0 closed.');
    for (const q of ['', 'erased=x1', 'erased=1x', 'erased=1234567890', 'retried=-1', 'closed=2'])
      expect([q, await notice(q)]).toEqual([q, undefined]);
    // The page's frame, and a delivery that is not there.
    const page = await get(app, `${BASE}/`);
    expect(page).toContain(`<link rel="stylesheet" href="${BASE}/assets/board.css">`);
    expect(page).toContain(
      `<h1><a href="${BASE}">payhook deliveries</a></h1><nav aria-label="Board"><a href="${BASE}?dead=open">Open dead letters</a></nav><span class="who">ada@shop.example</span>`,
    );
    const missing = await get(app, `${BASE}/deliveries/d_404`);
    expect(missing).toContain(`<h2>No such delivery</h2><p class="notice error" role="alert">There is no delivery d_404 in the ledger;`);
    expect(missing).toContain(`<p><a href="${BASE}">Back to the deliveries</a></p>`);
    expect(missing).toContain(`<link rel="stylesheet" href="${BASE}/assets/board.css"></head>`);
    // At the root of a site, the list is / itself.
    const root = await start({ basePath: '/', pageSize: 1 });
    await root.receiver.store.ledger!.append([entry(1), entry(2)]);
    expect(await get(root, '/')).toContain('<a rel="next" href="/?before=d_00002">Older deliveries</a>');
    expect(await get(root, '/?before=d_00002')).toContain('<nav class="pager" aria-label="Pages"><a href="/">Newest</a></nav>');
    expect(await get(root, '/deliveries/d_404')).toContain('<p><a href="/">Back to the deliveries</a></p>');
    const list = await get(root, '/');
    for (const part of [
      '<h1><a href="/">payhook deliveries</a></h1><nav aria-label="Board"><a href="/?dead=open">Open dead letters</a>',
      'method="get" action="/" role="search"',
      '<a href="/">Clear</a>',
    ])
      expect(list).toContain(part);
  });
});

describe('the merchant reference filter', () => {
  const body = (i: number, merchant: string) => ({
    body: eventBody(`ref_${i}`, { merchantReference: merchant }),
    bodyEncoding: 'utf8' as const,
  });

  it('reads kept bodies for it, a page at a time, the field kept as text', async () => {
    const app = await start({ pageSize: 2 });
    const hostile = `<o>"1"`;
    const mine = [1, 3, 4, 6].map((i) => entry(i, body(i, hostile)));
    const others = [entry(2, body(2, 'order-2')), entry(5), entry(7, { body: '{"merchantReference":42}' }), entry(8, { body: 'not json' })];
    await app.receiver.store.ledger!.append([...mine, ...others].sort((a, b) => a.receivedAt - b.receivedAt));
    const first = await get(app, `${BASE}/?merchant=${encodeURIComponent(hostile)}`);
    expect(ids(first)).toEqual([mine[3]!.id, mine[2]!.id]);
    expect(first).toContain(`<input name="merchant" value="${esc(hostile)}" maxlength="128">`);
    expect(next(first)).toBe(href('/', { merchant: hostile, before: mine[2]!.id }));
    expect(first).not.toContain('class="notice');
    const second = await get(app, next(first)!.replaceAll('&amp;', '&'));
    expect(ids(second)).toEqual([mine[1]!.id, mine[0]!.id]);
    // The last match ends the scan: a third page that is empty.
    const third = await get(app, next(second)!.replaceAll('&amp;', '&'));
    expect(third).toContain('<p id="empty">No deliveries match.</p>');
    expect(next(third)).toBeUndefined();
  });

  it('stops reading at ten ledger pages, says so, and reads on from there', async () => {
    const app = await start({ pageSize: 5 });
    const many = Array.from({ length: 10_000 }, (_, i) => entry(i, i === 1234 ? body(i, 'order-deep') : {}));
    await app.receiver.store.ledger!.append(many);
    const page = await get(app, `${BASE}/?merchant=order-deep`);
    expect(ids(page)).toEqual([many[1234]!.id]);
    expect(page).toContain(
      `<p class="notice">Merchant references are read from kept bodies: these are the matches among the ${many.length.toLocaleString('en-US')} records read; &quot;Older deliveries&quot; reads on.</p>`,
    );
    expect(next(page)).toBe(href('/', { merchant: 'order-deep', before: many[0]!.id }));
  });
});

describe('the platform view', () => {
  it('shows each row’s account, filters by one, and offers its retries and erasure', async () => {
    const app = await startPlatform({ board: { live: { maxOpen: 0 } } });
    app.refused.add('acct_B:ref_b');
    await app.deliver('acct_B', eventBody('ref_b'));
    await app.deliver('acct_A', eventBody('ref_a'));
    await app.receiver.store.ledger!.append([entry(99_999, { account: undefined })]);
    const [b] = await app.receiver.store.ledger!.list({ account: 'acct_B' });
    const all = await get(app, `${BASE}/`, 'pat');
    expect(all).toContain('<span class="who">pat@platform.example · every account</span>');
    expect(all).toContain('<table id="deliveries" data-accounts><caption');
    expect(all).toContain(
      '<th scope="col">Received</th><th scope="col">Account</th><th scope="col">Reference</th><th scope="col">Order</th>',
    );
    expect(all).toContain(
      '<td class="account" data-label="Account"><span class="muted">none</span></td><td class="value" data-label="Reference">ref_99999</td>',
    );
    expect(all).toContain('<td class="account" data-label="Account">acct_A</td><td class="value" data-label="Reference">ref_a</td>');
    expect(all).toContain('<label>Account<input name="account" value="" maxlength="64" placeholder="acct_7Q2"></label>');
    expect(all).not.toMatch(/role="alert"|<script/);
    const onlyB = await get(app, `${BASE}/?account=acct_B&dead=open`, 'pat');
    expect(ids(onlyB)).toEqual([b!.id]);
    expect(onlyB).toContain('<input name="account" value="acct_B" maxlength="64"');
    expect(onlyB).toContain(`<a href="${href('/confirm', { action: 'retry-all', account: 'acct_B' })}">Retry all open dead letters…</a>`);
    expect(onlyB).toContain(
      '<input type="hidden" name="action" value="erase-customer"><input type="hidden" name="account" value="acct_B">\n',
    );
    const bad = await get(app, `${BASE}/?account=${'b'.repeat(70)}!`, 'pat');
    expect(bad).toContain(
      `<p class="notice error" role="alert">&quot;${'b'.repeat(64)}&quot; is not an account name: 1 to 64 letters, digits, _ or -.</p>`,
    );
    expect(ids(bad)).toHaveLength(3);
    // An account's staff are held to theirs: no account field, whatever the query says.
    const ann = await get(app, `${BASE}/?account=acct_B`, 'ann');
    expect(ann).not.toMatch(/name="account"|data-accounts|role="alert"/);
    expect(ann).toContain('<td class="value" data-label="Reference">ref_a</td>');
  });
});
