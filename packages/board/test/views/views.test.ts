// One delivery's page and the chart, over records put straight into the ledger: every field a
// record may carry, without a server.
import { describe, expect, it } from 'vitest';
import { createReceiver, memoryStore, type LedgerEntry, type LedgerQuery } from '@payhook/core';
import { createBoard, type BoardOptions } from '@payhook/board';
import { chartImage } from '../../src/views/chart.js';
import { BASE, RECORDS_AT, recordsStore } from '@payhook/test-support/apps/board-app';

const T0 = RECORDS_AT;
const SHOWN_T0 = '2026-11-27 05:00:00 UTC';

/** A record as the receiver writes it, a signed webhook answered `processed` unless `over` says otherwise. */
const record = (id: string, over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  id,
  receivedAt: T0,
  source: 'webhook',
  outcome: 'processed',
  status: 200,
  durationMs: 12.4,
  signature: 'valid',
  ...over,
});

/** A board over these records; `page(id, query)` is that delivery's page as the board answers it. */
async function boardOver(entries: LedgerEntry[], options: Partial<BoardOptions> = {}) {
  const receiver = createReceiver({ secret: 's', store: recordsStore() });
  await receiver.store.ledger!.append(entries);
  const board = createBoard({ receiver, basePath: BASE, authorize: () => ({ user: 'ada@shop.example' }), ...options });
  return async (id: string, query = '') => {
    const r = await board.fetch(new Request(`http://127.0.0.1${BASE}/deliveries/${encodeURIComponent(id)}${query}`));
    return { status: r.status, text: await r.text() };
  };
}

const fact = (name: string, value: string) => `<dt>${name}</dt><dd>${value}</dd>`;
const valueFact = (name: string, value: string) => `<dt>${name}</dt><dd class="value">${value}</dd>`;
const href = (id: string) => `<a href="${BASE}/deliveries/${id}">${id}</a>`;
const confirm = (query: string, label: string) => `<a href="${BASE}/confirm?${query.replaceAll('&', '&amp;')}">${label}</a>`;

describe('one delivery’s page', () => {
  it('shows each fact of a replay with a late outcome and a retried dead letter', async () => {
    const e = record('d_2', {
      source: 'replay',
      replayOf: 'd_1',
      forced: true,
      reference: 'ref_1',
      event: 'payment.success',
      attempt: 2,
      secretIndex: 1,
      outcome: 'accepted',
      status: 202,
      late: { outcome: 'failed', durationMs: 1499.6, error: 'handler threw' },
      deadLetter: { reason: 'late-failed', at: T0, retriedBy: 'd_9' },
    });
    const { status, text } = await (await boardOver([e]))('d_2');
    expect(status).toBe(200);
    expect(text).toContain(`<title>Delivery ref_1 · payhook</title>`);
    expect(text).toContain('<h2>Delivery <code class="value">d_2</code></h2>');
    expect(text).toContain(fact('Received', SHOWN_T0));
    expect(text).toContain(fact('Source', `replay, replay of ${href('d_1')} (forced)`));
    expect(text).toContain(valueFact('Reference', 'ref_1'));
    expect(text).toContain(fact('Event', 'payment.success'));
    expect(text).toContain(fact('Attempt', `${e.attempt} of the event`));
    expect(text).toContain(fact('Signature', `valid, secret #${e.secretIndex! + 1} of the configured ones`));
    expect(text).toMatch(/<dt>Answer<\/dt><dd><span class="outcome warn" title="[^"]*">accepted<\/span>, 202, in 12 ms<\/dd>/);
    expect(text).toMatch(/<dt>Late outcome<\/dt><dd><span class="outcome bad" title="[^"]*">failed<\/span> after 1500 ms<\/dd>/);
    expect(text).toContain(valueFact('Error', 'handler threw'));
    expect(text).toContain(fact('Dead letter', `late-failed, ${SHOWN_T0}; retried by ${href('d_9')}`));
    // A receiver without accounts: no account row, nothing in its place.
    expect(text).toContain(`${fact('Received', SHOWN_T0)}\n\n<dt>Source</dt>`);
  });

  it('says none, no, or nothing for what a bare record lacks, and names it by its id', async () => {
    const page = await boardOver([record('d_1', { source: 'reconcile', signature: 'not-checked', replayOf: undefined })]);
    const { text } = await page('d_1');
    expect(text).toContain(`<title>Delivery d_1 · payhook</title>`);
    expect(text).toContain(fact('Source', 'reconcile'));
    expect(text).toContain(valueFact('Reference', 'none'));
    expect(text).toContain(fact('Event', 'none'));
    expect(text).toContain(fact('Attempt', 'nothing was claimed'));
    expect(text).toContain(fact('Signature', 'not-checked'));
    expect(text).toContain(fact('Late outcome', 'none'));
    expect(text).toContain(valueFact('Error', 'none'));
    expect(text).toContain(fact('Dead letter', 'no'));
    // No action led here: nothing between the heading and the facts.
    expect(text).toContain('</h2>\n\n<dl class="facts" id="facts">');
  });

  it('shows the answer’s own error before the late one, an unforced replay, and an open dead letter', async () => {
    const e = record('d_2', {
      source: 'replay',
      replayOf: 'd_1',
      error: 'answer error',
      late: { outcome: 'failed', durationMs: 5, error: 'late error' },
      deadLetter: { reason: 'rejected', at: T0 },
    });
    const { text } = await (await boardOver([e]))('d_2');
    expect(text).toContain(fact('Source', `replay, replay of ${href('d_1')}`));
    expect(text).toContain(valueFact('Error', 'answer error'));
    expect(text).toContain(fact('Dead letter', `rejected, ${SHOWN_T0}; open`));
  });

  it('shows a JSON body pretty-printed, other text as it came, and why a body is not shown', async () => {
    const json = JSON.stringify({ reference: 'ref_1', note: '<b>hi</b>' });
    const page = await boardOver([
      record('d_1', { body: json, bodyEncoding: 'utf8' }),
      record('d_2', { body: 'a=1 & b=<2>', bodyEncoding: 'utf8' }),
      record('d_3', { body: 'AAEC/w==', bodyEncoding: 'base64' }),
      record('d_4', { bodySha256: 'ab12' }),
      record('d_5', { outcome: 'unauthorized', status: 401, signature: 'invalid', bodySha256: 'cd34', bodyPrefix: '<x' }),
      record('d_6', { bodyPrefix: 'only a prefix' }),
      record('d_7'),
    ]);
    const pre = '<h3>Body</h3>\n';
    const pretty = JSON.stringify(JSON.parse(json), null, 2).replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
    expect((await page('d_1')).text).toContain(`${pre}<pre class="body" id="body" tabindex="0">${pretty}</pre>`);
    expect((await page('d_2')).text).toContain(`${pre}<pre class="body" id="body" tabindex="0">a=1 &amp; b=&lt;2&gt;</pre>`);
    expect((await page('d_3')).text).toContain(`${pre}<p>Not UTF-8 text; ${'AAEC/w=='.length} characters of base64 kept.</p>`);
    expect((await page('d_4')).text).toContain(`${pre}<p>Only its SHA-256 was kept: <code class="value" id="hash">ab12</code></p>\n`);
    expect((await page('d_5')).text).toContain(
      `${pre}<p>Only its SHA-256 was kept: <code class="value" id="hash">cd34</code></p><p>It began:</p><pre class="body" id="prefix">&lt;x</pre>\n`,
    );
    expect((await page('d_6')).text).toContain(`${pre}<p>It began:</p><pre class="body" id="prefix">only a prefix</pre>\n`);
    expect((await page('d_7')).text).toContain(`${pre}<p>Not kept.</p>`);
  });

  it('lists every attempt of its reference, oldest first, this one marked; none of another reference or account', async () => {
    const page = await boardOver([
      record('d_1', { reference: 'ref_1', event: 'payment.success', attempt: 1, outcome: 'failed', status: 500 }),
      record('d_2', { reference: 'ref_2' }),
      record('d_3', { reference: 'ref_1', account: 'm_other' }),
      record('d_4', {
        reference: 'ref_1',
        source: 'reconcile',
        outcome: 'accepted',
        status: 202,
        late: { outcome: 'processed', durationMs: 1 },
      }),
      record('d_5'),
    ]);
    const { text } = await page('d_4');
    const timeline = /<ol class="timeline" id="timeline">(.*?)<\/ol>/s.exec(text)![1]!;
    const items = timeline.split('</li>').filter((li) => li !== '');
    expect(items).toHaveLength(2);
    expect(items[0]).toMatch(
      new RegExp(
        `^<li><a href="${BASE}/deliveries/d_1">${SHOWN_T0}</a> webhook payment.success: <span class="outcome bad"[^>]*>failed</span> \\(500\\), attempt 1$`,
      ),
    );
    expect(items[1]).toMatch(
      new RegExp(
        `^<li class="current" aria-current="true"><a href="${BASE}/deliveries/d_4">${SHOWN_T0}</a> reconcile : <span class="outcome warn"[^>]*>accepted</span> → <span class="outcome good"[^>]*>processed</span> \\(202\\)$`,
      ),
    );
    // A record without a reference is its own only attempt.
    const lone = /<ol class="timeline" id="timeline">(.*?)<\/ol>/s.exec((await page('d_5')).text)![1]!;
    expect(lone.match(/<li/g)).toHaveLength(1);
    expect(lone).toContain(`<li class="current" aria-current="true"><a href="${BASE}/deliveries/d_5">`);
  });

  it('links the actions a record allows for someone who can act, and none for a read-only viewer', async () => {
    const entries = [
      record('d_1', { reference: 'ref_1', account: 'm_1' }),
      record('d_2', { signature: 'invalid', outcome: 'unauthorized', status: 401 }),
      record('d_3', { source: 'reconcile', signature: 'not-checked', deadLetter: { reason: 'reconcile-failed', at: T0 } }),
      record('d_4', { signature: 'invalid', deadLetter: { reason: 'rejected', at: T0, retriedBy: 'd_5' } }),
    ];
    const page = await boardOver(entries);
    const nav = async (id: string) => /<nav class="actions" aria-label="Actions">(.*?)<\/nav>/s.exec((await page(id)).text)?.[1];
    // Not a platform's board: the erasure names the reference only, whatever account the record has.
    expect(await nav('d_1')).toBe(
      confirm('action=replay&id=d_1', 'Replay…') +
        confirm('action=force&id=d_1', 'Force replay…') +
        confirm('action=erase&id=d_1&reference=ref_1', 'Erase this payment’s records…'),
    );
    // A refused webhook never runs, and has nothing else to do.
    expect(await nav('d_2')).toBeUndefined();
    expect((await page('d_2')).text).toContain('</dl>\n\n<h3>Body</h3>');
    expect(await nav('d_3')).toBe(
      confirm('action=replay&id=d_3', 'Replay…') +
        confirm('action=force&id=d_3', 'Force replay…') +
        confirm('action=retry&id=d_3', 'Retry dead letter…'),
    );
    // A dead letter already retried is not offered again.
    expect(await nav('d_4')).toBeUndefined();
    const readOnly = await boardOver(entries, { readOnly: true });
    for (const id of ['d_1', 'd_3']) {
      const { text } = await readOnly(id);
      expect(text).not.toContain('<nav class="actions"');
      expect(text).not.toContain(`${BASE}/confirm`);
      expect(text).toContain('</dl>\n\n<h3>Body</h3>');
    }
  });

  it('says what the action that led here did', async () => {
    const page = await boardOver([
      record('d_1', { outcome: 'processed', deadLetter: { reason: 'rejected', at: T0, retriedBy: 'd_2' } }),
      record('d_3'),
    ]);
    const notice = async (id: string, after: string) =>
      /<p class="notice" role="status">(.*?)<\/p>/.exec((await page(id, `?after=${after}`)).text)?.[1];
    expect(await notice('d_1', 'replay')).toMatch(/^Replayed: <span class="outcome good"[^>]*>processed<\/span> \(200\)\.$/);
    expect(await notice('d_1', 'force')).toMatch(/^Replayed \(forced\): <span class="outcome good"[^>]*>processed<\/span> \(200\)\.$/);
    expect(await notice('d_1', 'retry')).toBe('Retried: the dead letter is closed.');
    expect(await notice('d_3', 'retry')).toBe('Retried: the dead letter is still open.');
    expect(await notice('d_3', 'other')).toBeUndefined();
  });

  it('escapes what a stranger wrote: the reference, the event, the error, the body, the dead letter’s retry', async () => {
    const evil = '<img src=x onerror=alert(1)>';
    const page = await boardOver([
      record('d_1', {
        reference: evil,
        event: `"${evil}`,
        error: evil,
        body: evil,
        bodyEncoding: 'utf8',
        signature: 'invalid',
        deadLetter: { reason: 'rejected', at: T0, retriedBy: evil },
      }),
    ]);
    const { status, text } = await page('d_1');
    expect(status).toBe(200);
    const shown = '&lt;img src=x onerror=alert(1)&gt;';
    expect(text).not.toContain('<img');
    expect(text).toContain(`<title>Delivery ${shown} · payhook</title>`);
    expect(text).toContain(valueFact('Reference', shown));
    expect(text).toContain(fact('Event', `&quot;${shown}`));
    expect(text).toContain(valueFact('Error', shown));
    expect(text).toContain(`<pre class="body" id="body" tabindex="0">${shown}</pre>`);
    expect(text).toContain(`; retried by <a href="${BASE}/deliveries/${encodeURIComponent(evil)}">${shown}</a></dd>`);
    expect(text).toContain(
      confirm(new URLSearchParams({ action: 'erase', id: 'd_1', reference: evil }).toString(), 'Erase this payment’s records…'),
    );
  });
});

describe('the chart', () => {
  const MINUTE = 60_000;
  const now = T0 + 30_000; // half a minute into the newest bar, which begins at T0
  /** A ledger that answers these records and keeps the query it was asked. */
  const ledgerOf = (entries: LedgerEntry[]) => {
    const asked: LedgerQuery[] = [];
    return { asked, list: async (q: LedgerQuery) => (asked.push(q), entries) };
  };
  const svgOf = async (entries: LedgerEntry[], query: LedgerQuery = {}) => {
    const ledger = ledgerOf(entries);
    const r = await chartImage(ledger, query, now);
    expect(r.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    return { svg: await r.text(), asked: ledger.asked };
  };
  const COLOURS = { good: '#2e8b57', warn: '#d18f00', bad: '#b3261e' };
  /** A bar's part: minute i of 60 across 600 wide, `count` of the tallest minute's `top` over 110 high, from `bottom` up. */
  const part = (i: number, bottom: number, count: number, top: number, tone: keyof typeof COLOURS) => {
    const h = (count / top) * 110;
    return `<rect x="${(i * 10 + 1).toFixed(1)}" y="${(bottom - h).toFixed(1)}" width="8.0" height="${h.toFixed(1)}" fill="${COLOURS[tone]}"/>`;
  };

  it('asks for the newest 1,000 of the last hour under the page’s filters, from its From time when later', async () => {
    const filters = { outcome: 'failed', reference: 'ref_1', before: 'd_9' } as LedgerQuery;
    expect((await svgOf([], filters)).asked).toEqual([{ ...filters, before: undefined, since: now - 60 * MINUTE, limit: 1000 }]);
    const since = now - 5 * MINUTE;
    expect((await svgOf([], { since })).asked).toEqual([{ since, before: undefined, limit: 1000 }]);
    expect((await svgOf([], { since: now - 2 * 60 * MINUTE })).asked[0]!.since).toBe(now - 60 * MINUTE);
  });

  it('stacks each minute’s counts by tone, good at the bottom, scaled to the tallest minute', async () => {
    const { svg } = await svgOf([
      record('d_1', { receivedAt: T0 }), // the first instant of the newest minute
      record('d_2', { receivedAt: now }),
      record('d_3', { receivedAt: now, outcome: 'accepted', status: 202, late: { outcome: 'failed', durationMs: 1 } }),
      record('d_4', { receivedAt: T0 - 2 * MINUTE, outcome: 'accepted', status: 202 }),
      record('d_5', { receivedAt: T0 - 59 * MINUTE, outcome: 'mystery' as never }), // an outcome this board does not know: amber
      record('d_6', { receivedAt: T0 - 60 * MINUTE }), // over an hour ago
      record('d_7', { receivedAt: T0 + MINUTE }), // after now: a clock ahead
    ]);
    const top = 3;
    const rects =
      part(0, 120, 1, top, 'warn') +
      part(57, 120, 1, top, 'warn') +
      part(59, 120, 2, top, 'good') +
      part(59, 120 - (2 / top) * 110, 1, top, 'bad');
    expect(svg).toContain(`<line x1="0" y1="120" x2="600" y2="120" stroke="#999"/>${rects}<line x1="90.0" y1="120"`);
    expect(svg).toContain(`<title>7 deliveries in the last hour, per minute; the tallest minute had ${top}</title>`);
  });

  it('draws its frame and legend, and no bar for an empty hour', async () => {
    const { svg } = await svgOf([]);
    const legend = (i: number, tone: keyof typeof COLOURS, label: string) =>
      `<rect x="${i * 200}" y="142" width="10" height="10" fill="${COLOURS[tone]}"/><text x="${i * 200 + 14}" y="151" font-size="10" font-family="sans-serif" fill="#333">${label}</text>`;
    expect(svg).toContain(
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 600 158" width="600" height="158"><title>0 deliveries in the last hour, per minute; the tallest minute had 0</title>',
    );
    // No bar: the time axis follows the line, then the legend.
    expect(svg).toContain(`<line x1="0" y1="120" x2="600" y2="120" stroke="#999"/><line x1="90.0"`);
    expect(svg).toContain(`05:00 UTC</text>${legend(0, 'good', 'settled')}${legend(1, 'warn', 'answered, not settled')}`);
    expect(svg).toContain(`${legend(2, 'bad', 'refused, failed or dead letter')}</svg>`);
    // One delivery: the tallest minute had 1, not 0.
    expect((await svgOf([record('d_1', { receivedAt: now })])).svg).toContain('the tallest minute had 1</title>');
  });
  it('labels its time axis every ten minutes in UTC, as the list shows times, the last label saying so', async () => {
    const tick = (x: number, label: string, anchor = 'middle') =>
      `<line x1="${x}.0" y1="120" x2="${x}.0" y2="124" stroke="#999"/><text x="${x}.0" y="134" font-size="10" font-family="sans-serif" fill="#333" text-anchor="${anchor}">${label}</text>`;
    // Now 05:00:30: bars from 04:01 to 05:00; a tick at 04:10 (the tenth bar) … 05:00 (the last, kept inside the right edge).
    const { svg } = await svgOf([]);
    const ticks = ['04:10', '04:20', '04:30', '04:40', '04:50'].map((t, i) => tick(90 + i * 100, t)).join('');
    expect(svg).toContain(`stroke="#999"/>${ticks}${tick(590, '05:00 UTC', 'end')}<rect x="0" y="142"`);
    expect(svg.match(/<text [^>]*text-anchor/g)).toHaveLength(6);
    // Another zone on the machine changes nothing: the labels are UTC.
    const zone = process.env.TZ;
    process.env.TZ = 'Asia/Kolkata';
    try {
      // Now 05:09:30: the first bar begins at 04:10, on the left edge.
      const r = await chartImage(ledgerOf([]), {}, T0 + 9 * MINUTE + 30_000);
      const at = await r.text();
      expect(at).toContain(`stroke="#999"/>${tick(0, '04:10', 'start')}${tick(100, '04:20')}`);
      expect(at).toContain(`${tick(500, '05:00 UTC')}<rect x="0" y="142"`);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
