import { describe, expect, it, vi } from 'vitest';
import type { LedgerEntry } from '@payhook/core';
import { liveRow } from '../src/live.js';
import { perMinute } from '../src/views/chart.js';
import { BASE, boardApps, eventBody, formToken, getPage } from '@payhook/test-support/apps/board-app';
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
      expect(await opened[2]!.text()).toBe('Too many live views are open; reload later.\n');
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

describe('a live stream, as the browser reads it', () => {
  /** The stream's text as it comes, through the board's own fetch: `until` reads on until it holds `text`. */
  const raw = async (response: Response) => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const until = async (wanted: string) => {
      while (!text.includes(wanted)) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error(`the stream ended without ${JSON.stringify(wanted)}: ${JSON.stringify(text)}`);
        text += decoder.decode(chunk.value, { stream: true });
      }
      return text;
    };
    return { until, reader, cancel: () => reader.cancel() };
  };

  it('opens with how long the browser waits before the next stream, then sends each delivery as an event with its id', async () => {
    const { board, origin, deliver, receiver } = await start({ live: { intervalMs: 25 } });
    const stream = await raw(await board.fetch(new Request(`${origin}${BASE}/live`)));
    expect(await stream.until('\n\n')).toBe('retry: 25\n: live\n\n');
    await deliver(eventBody('ref_sent'));
    const [entry] = await receiver.store.ledger!.list({});
    const text = await stream.until('"ref_sent"');
    expect(text).toContain(
      `id: ${entry!.id}\nevent: delivery\ndata: ${JSON.stringify(liveRow({ settings: { basePath: BASE } } as never, entry!))}\n\n`,
    );
    await stream.cancel();
  });

  it('after a reconnect, sends only what came after the last event the browser got (Last-Event-ID before the page’s `after`)', async () => {
    const { origin, deliver, receiver } = await start({ live: { intervalMs: 20 } });
    for (const r of ['ref_1', 'ref_2', 'ref_3']) await deliver(eventBody(r));
    const [third, second, first] = await receiver.store.ledger!.list({});
    const stream = await openLive(`${origin}${BASE}/live?after=${first!.id}`, { 'last-event-id': second!.id });
    await deliver(eventBody('ref_4'));
    const events = await stream.until(2);
    expect(events.map((e) => e.data.reference)).toEqual(['ref_3', 'ref_4']);
    expect(events[0]!.id).toBe(third!.id);
    stream.close();
  });

  it('with a merchant reference filter, sends only the deliveries whose bodies name it', async () => {
    const { origin, deliver } = await start({ live: { intervalMs: 20 } });
    const stream = await openLive(`${origin}${BASE}/live?merchant=order-4711`);
    await deliver(eventBody('ref_other', { merchantReference: 'order-4712' }));
    await deliver(eventBody('ref_mine', { merchantReference: 'order-4711' }));
    await deliver(eventBody('ref_mine_too', { merchantReference: 'order-4711' }));
    await stream.until(2);
    expect(stream.events.map((e) => e.data.reference)).toEqual(['ref_mine', 'ref_mine_too']);
    stream.close();
  });

  it('keeps the page’s From time: what came before it is not sent, even within the look-back', async () => {
    const { origin, deliver, receiver } = await start({ live: { intervalMs: 20 } });
    await deliver(eventBody('ref_before'));
    const [before] = await receiver.store.ledger!.list({});
    // A record received after the first one's millisecond (the From time below).
    let after = before!;
    while (after.receivedAt === before!.receivedAt) {
      await deliver(eventBody('ref_after'));
      after = (await receiver.store.ledger!.list({ reference: 'ref_after' }))[0]!;
    }
    const since = new Date(before!.receivedAt + 1).toISOString();
    const stream = await openLive(`${origin}${BASE}/live?since=${since}`);
    const [event] = await stream.until(1);
    expect(event!.data.reference).toBe('ref_after');
    stream.close();
  });

  it('says so in a comment when the ledger does not answer, and goes on sending once it does', async () => {
    const { board, origin, deliver, receiver } = await start({ live: { intervalMs: 20 } });
    const ledger = receiver.store.ledger!;
    const list = ledger.list.bind(ledger);
    let failures = 1;
    ledger.list = async (q) => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('connection reset');
      }
      return list(q);
    };
    const stream = await raw(await board.fetch(new Request(`${origin}${BASE}/live`)));
    expect(await stream.until(': the ledger did not answer; trying again\n\n')).not.toContain('connection reset');
    await deliver(eventBody('ref_later'));
    expect(await stream.until('"ref_later"')).toContain('event: delivery\n');
    await stream.cancel();
  });

  it('frees its place once, and looks no more, when the browser leaves while a look waits on the ledger', async () => {
    const { board, origin, deliver, receiver } = await start({ live: { intervalMs: 60_000, maxOpen: 1 } });
    await deliver(eventBody('ref_in_the_lookback'));
    const ledger = receiver.store.ledger!;
    const list = ledger.list.bind(ledger);
    let looks = 0;
    let release = () => {};
    let asked = () => {};
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    ledger.list = async (q) => {
      looks += 1;
      asked();
      await new Promise<void>((resolve) => (release = resolve));
      return list(q);
    };
    const open = () => board.fetch(new Request(`${origin}${BASE}/live`));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const opened: Response[] = [];
    try {
      const first = await open();
      await vi.advanceTimersByTimeAsync(60_000);
      await waiting;
      await first.body!.cancel();
      // The look finds a record to send to a stream that is gone, and ends there.
      release();
      await vi.advanceTimersByTimeAsync(10 * 60_000);
      expect(looks).toBe(1);
      // Its one place is free, and only one: maxOpen is 1.
      opened.push(await open(), await open());
      expect(opened.map((r) => r.status)).toEqual([200, 503]);
    } finally {
      vi.useRealTimers();
      for (const r of opened) await r.body?.cancel().catch(() => {});
    }
  });

  it('after a reconnect, looks back from the last event the browser got, however long ago: nothing in between is lost', async () => {
    const { board, origin, deliver, receiver } = await start({ live: { intervalMs: 20 } });
    await deliver(eventBody('ref_template'));
    const ledger = receiver.store.ledger!;
    const [template] = await ledger.list({});
    const now = Date.now();
    /** A record received `ago` ms before now, with the id the ledger gives such a record (its time in base 36 first). */
    const at = (ago: number, reference: string): LedgerEntry => {
      const receivedAt = now - ago;
      return { ...template!, id: `${receivedAt.toString(36).padStart(11, '0')}-${reference}`, receivedAt, reference };
    };
    const [gotten, missed] = [at(60_000, 'ref_gotten'), at(30_000, 'ref_missed')];
    await ledger.append([gotten, missed]);
    const since: (number | undefined)[] = [];
    const list = ledger.list.bind(ledger);
    ledger.list = (q) => {
      since.push(q?.since);
      return list(q);
    };
    // The browser got `gotten` a minute ago, then lost its connection: `missed` came while it was away.
    const stream = await raw(await board.fetch(new Request(`${origin}${BASE}/live`, { headers: { 'last-event-id': gotten.id } })));
    expect(await stream.until('"ref_missed"')).not.toContain('"ref_gotten"');
    expect(since[0]).toBe(gotten.receivedAt - 15_000);
    await stream.cancel();
  });

  it('ends after five minutes, freeing its place; the browser then opens the next', async () => {
    const { board, origin } = await start({ live: { intervalMs: 60_000, maxOpen: 1 } });
    const open = () => board.fetch(new Request(`${origin}${BASE}/live`));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const first = await open();
      const stream = await raw(first);
      await stream.until('\n\n');
      await vi.advanceTimersByTimeAsync(4 * 60_000);
      const meanwhile = await open();
      expect(meanwhile.status).toBe(503);
      await vi.advanceTimersByTimeAsync(60_000 - 1);
      expect((await open()).status).toBe(503);
      await vi.advanceTimersByTimeAsync(1);
      expect(await stream.reader.read()).toEqual({ done: true, value: undefined });
      const next = await open();
      expect(next.status).toBe(200);
      await next.body!.cancel();
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives the page’s script each row’s plain values: late outcome, dead letter, attempt, time taken', () => {
    const entry: LedgerEntry = {
      id: '0000000000a-late',
      receivedAt: Date.UTC(2026, 10, 27, 5, 30, 20, 400),
      source: 'replay',
      account: 'acct_A',
      reference: 'ref_late',
      event: 'payment.success',
      outcome: 'accepted',
      status: 202,
      durationMs: 12.6,
      attempt: 2,
      signature: 'valid',
      late: { outcome: 'rejected', durationMs: 40 },
      deadLetter: { reason: 'rejected', at: 0, retriedBy: '0000000000b-next' },
    } as LedgerEntry;
    const settings = { basePath: BASE } as never;
    expect(liveRow({ settings }, entry)).toEqual({
      id: '0000000000a-late',
      href: `${BASE}/deliveries/0000000000a-late`,
      account: 'acct_A',
      receivedAt: '2026-11-27 05:30:20 UTC',
      reference: 'ref_late',
      order: '',
      customer: '',
      amount: '',
      why: 'body not kept',
      event: 'payment.success · replay',
      outcome: 'accepted',
      tone: 'warn',
      late: 'rejected',
      lateTone: 'bad',
      resolved: '',
      resolvedHref: '',
      deadLetter: 'dead letter, retried',
      deadTone: 'resolved',
      status: 202,
      attempt: '2',
      signature: 'valid',
      took: '13 ms',
    });
    const plain = {
      ...entry,
      account: undefined,
      reference: undefined,
      event: undefined,
      source: 'webhook',
      late: undefined,
      attempt: undefined,
    };
    expect(liveRow({ settings }, { ...plain, deadLetter: { reason: 'rejected', at: 0 } } as LedgerEntry)).toMatchObject({
      account: '',
      reference: '',
      event: '',
      late: '',
      lateTone: '',
      deadLetter: 'dead letter',
      attempt: '',
    });
    expect(liveRow({ settings }, { ...plain, deadLetter: undefined } as LedgerEntry).deadLetter).toBe('');
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
    expect([...page.text.matchAll(/<td class="value" data-label="Reference">([^<]+)<\/td>/g)].map((m) => m[1])).toEqual(['ref_a']);
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
