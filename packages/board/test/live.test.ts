import { describe, expect, it } from 'vitest';
import { perMinute } from '../src/views/chart.js';
import { BASE, boardApps, eventBody, formToken, getPage } from './board-app.js';
import { openLive } from './sse.js';

const start = boardApps();

describe('live updates', () => {
  it('sends each new delivery once, oldest first, with the page’s filters, after the page’s newest', async () => {
    const { origin, deliver } = await start({ live: { intervalMs: 20 } });
    await deliver(eventBody('ref_before'));
    const page = await getPage(origin, `${BASE}/?event=payment.success`);
    const live = /data-live="([^"]+)"/.exec(page.text)![1]!.replaceAll('&amp;', '&');
    expect(live).toMatch(/^\/admin\/payments\/live\?event=payment.success&after=/);
    const stream = await openLive(`${origin}${live}`);
    expect([stream.status, stream.type]).toEqual([200, 'text/event-stream; charset=utf-8']);
    await deliver(eventBody('ref_new_1'));
    await deliver(eventBody('<b>ref_new_2</b>'));
    await deliver(eventBody('ref_new_1')); // a copy: a record of its own
    const events = await stream.until(3);
    expect(events.map((e) => [e.data.reference, e.data.outcome])).toEqual([
      ['ref_new_1', 'processed'],
      ['<b>ref_new_2</b>', 'processed'],
      ['ref_new_1', 'duplicate'],
    ]);
    expect(events[0]!.data.href).toBe(`${BASE}/deliveries/${events[0]!.id}`);
    // Nothing is sent twice while the stream looks back over the last seconds.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stream.events).toHaveLength(3);
    stream.close();
  });

  it('keeps at most live.maxOpen streams open, and frees a place when one closes', async () => {
    const { origin } = await start({ live: { intervalMs: 20, maxOpen: 2 } });
    await getPage(origin, `${BASE}/`);
    const a = await openLive(`${origin}${BASE}/live`);
    const b = await openLive(`${origin}${BASE}/live`);
    const c = await openLive(`${origin}${BASE}/live`);
    expect([a.status, b.status, c.status]).toEqual([200, 200, 503]);
    a.close();
    let d = await openLive(`${origin}${BASE}/live`);
    for (let i = 0; d.status !== 200 && i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      d = await openLive(`${origin}${BASE}/live`);
    }
    expect(d.status).toBe(200);
    b.close();
    d.close();
  });

  it('counts its places exactly: maxOpen streams, then 503; each one cancelled frees one; a refusal takes none; 0 is off', async () => {
    // The board's own fetch, no socket, and no look at the ledger within the test (intervalMs 60 s): the answers are the count.
    const { board, origin } = await start({ live: { intervalMs: 60_000, maxOpen: 2 } });
    const opened: Response[] = [];
    const open = async (on = board) => {
      const r = await on.fetch(new Request(`${origin}${BASE}/live`));
      opened.push(r);
      return r.status;
    };
    try {
      expect([await open(), await open(), await open(), await open()]).toEqual([200, 200, 503, 503]);
      await opened[0]!.body!.cancel();
      expect([await open(), await open()]).toEqual([200, 503]);
      await opened[1]!.body!.cancel();
      await opened[4]!.body!.cancel();
      expect([await open(), await open(), await open()]).toEqual([200, 200, 503]);
      const off = await start({ live: { maxOpen: 0 } });
      expect(await open(off.board)).toBe(503);
    } finally {
      for (const r of opened) await r.body?.cancel().catch(() => {});
    }
  });

  it('ends quietly when the browser leaves while the ledger is still answering', async () => {
    const { origin, receiver, deliver } = await start({ live: { intervalMs: 20, maxOpen: 1 } });
    await deliver(eventBody('ref_old'));
    const ledger = receiver.store.ledger!;
    const list = ledger.list.bind(ledger);
    let release = () => {};
    let asked = () => {};
    const askedOnce = new Promise<void>((resolve) => (asked = resolve));
    // The next look waits on the ledger until the browser has gone.
    ledger.list = async (q) => {
      asked();
      await new Promise<void>((resolve) => (release = resolve));
      return list(q);
    };
    const stream = await openLive(`${origin}${BASE}/live`);
    expect(stream.status).toBe(200); // else no look ever asks the ledger, and the wait below never ends
    await askedOnce;
    stream.close();
    ledger.list = list;
    // Its place is free once the board has seen the browser go (maxOpen is 1).
    const opened = async () => {
      for (let i = 0; i < 100; i++) {
        const next = await openLive(`${origin}${BASE}/live`);
        if (next.status === 200) return next;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('the stream the browser left still holds its place');
    };
    const next = await opened();
    // The look that was waiting goes on, with a record to send to a stream that has ended: nothing is thrown.
    await deliver(eventBody('ref_new'));
    release();
    // The new stream (no page behind it, so it looks back over the last seconds) gets both; the old one got nothing.
    await next.until(2);
    expect(next.events.map((e) => e.data.reference)).toEqual(['ref_old', 'ref_new']);
    expect(stream.events).toEqual([]);
    next.close();
  });
});

describe('the chart, the merchant reference, and a customer’s erasure', () => {
  it('counts deliveries per minute of the last hour, by tone of outcome', () => {
    const now = Date.UTC(2026, 10, 27, 5, 30, 20);
    const e = (minutesAgo: number, outcome: string) => ({ receivedAt: now - minutesAgo * 60_000, outcome }) as never;
    const bars = perMinute(
      [e(0, 'processed'), e(0, 'duplicate'), e(0, 'unauthorized'), e(2, 'accepted'), e(59, 'rejected'), e(61, 'processed')],
      now,
    );
    expect(bars).toHaveLength(60);
    expect(bars[59]).toEqual({ good: 2, warn: 0, bad: 1 });
    expect(bars[57]).toEqual({ good: 0, warn: 1, bad: 0 });
    expect(bars[0]).toEqual({ good: 0, warn: 0, bad: 1 });
    expect(bars.reduce((n, b) => n + b.good! + b.warn! + b.bad!, 0)).toBe(5);
  });

  it('serves the chart as an SVG image with counts only, under the board’s policy', async () => {
    const { origin, deliver } = await start();
    for (const r of ['ref_1', 'ref_2', '<script>x</script>']) await deliver(eventBody(r));
    const r = await fetch(`${origin}${BASE}/chart.svg`);
    const svg = await r.text();
    expect(r.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(svg).toContain('<title>3 deliveries in the last hour, per minute; the tallest minute had 3</title>');
    expect(svg).not.toContain('script');
  });

  it('finds deliveries by the merchant reference in their kept bodies', async () => {
    const { origin, deliver } = await start();
    await deliver(eventBody('ref_a', { merchantReference: 'order-4711' }));
    await deliver(eventBody('ref_b', { merchantReference: 'order-4712' }));
    const page = await getPage(origin, `${BASE}/?merchant=order-4711`);
    expect([...page.text.matchAll(/<td class="value">([^<]+)<\/td>/g)].map((m) => m[1])).toEqual(['ref_a']);
  });

  it('erases one customer’s records by email, confirmed, and audits it without the email', async () => {
    const { origin, deliver, receiver, audit } = await start();
    await deliver(eventBody('ref_ada', { customer: { name: 'Ada', email: 'Ada@Example.com', phone: '+251911000001' } }));
    await deliver(eventBody('ref_bo', { customer: { name: 'Bo', email: 'bo@example.com', phone: '+251911000002' } }));
    const first = await getPage(origin, `${BASE}/`);
    const confirm = await getPage(origin, `${BASE}/confirm?action=erase-customer&email=ada@example.com`, first.cookie);
    expect(confirm.text).toContain('customer <code class="value">ada@example.com</code>');
    const r = await fetch(`${origin}${BASE}/actions/erase-customer`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: first.cookie!, 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ csrf: formToken(confirm.text)!, email: 'ada@example.com' }),
    });
    expect(r.headers.get('location')).toBe(`${BASE}?erased=1`);
    expect((await receiver.store.ledger!.list({})).map((e) => e.reference)).toEqual(['ref_bo']);
    const line = audit.find((l) => l.fields.board?.action === 'erase-customer')!;
    expect(JSON.stringify(line)).not.toContain('example.com');
    expect(line.fields.board).toMatchObject({ user: 'ada@shop.example', erased: 1, by: 'email' });
  });
});
