import { describe, expect, it, vi } from 'vitest';
import { createEvent, manualClock, newReference, signedBody, signedRequest } from '@payhook/testing';
import {
  createReceiver,
  memoryStore,
  NonRetriableError,
  sign,
  type DeliveryReport,
  type HandlerContext,
  type ReceiverOptions,
  type Store,
} from '../../src/index.js';
import { watch } from '../watch.js';

const secret = 'whsec_receiver_test';
const quiet = { info() {}, warn() {}, error() {} };

/** A memory store on a manual clock whose first `failures` done-record writes fail, as an overloaded store's would. */
function failingCompletes(failures: number) {
  const clock = manualClock(0);
  const inner = memoryStore({ now: clock.now });
  const flaky: Store = {
    ...inner,
    complete: (k, t, o) => (failures-- > 0 ? Promise.reject(new Error('connection timeout')) : inner.complete(k, t, o)),
  };
  return { clock, inner, flaky };
}

function setup(options: Partial<ReceiverOptions> = {}) {
  const store = options.store ?? memoryStore();
  // Logged fields: every report (the loop watch's are not), its error under `err`.
  const reports: (DeliveryReport & { err?: unknown })[] = [];
  const receiver = createReceiver({
    secret,
    store,
    logger: (_level, fields) => void ('outcome' in fields && reports.push(fields as DeliveryReport)),
    ...options,
  });
  const runs: { event: string; reference: string; ctx: HandlerContext }[] = [];
  receiver.onAny((event, ctx) => {
    runs.push({ event: event.event, reference: event.reference, ctx });
  });
  return { receiver, store, runs, reports };
}

const post = (body: BodyInit | null, headers: Record<string, string> = {}, init: RequestInit = {}) =>
  new Request('http://127.0.0.1/webhooks', { method: 'POST', body, headers, ...init });

describe('the receiver pipeline', () => {
  it('runs a valid delivery once and answers 200; the same bytes again get 200 and run nothing', async () => {
    const { receiver, runs } = setup();
    const event = createEvent('payment.success');
    const first = await receiver.handle(signedRequest(event, { secret }));
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ outcome: 'processed' });
    const again = await receiver.handle(signedRequest(event, { secret }));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ outcome: 'duplicate' });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.ctx).toMatchObject({
      reference: event.reference,
      dedupeKey: `sandbox:${event.reference}:payment.success`,
      secretIndex: 0,
      redelivery: false,
      attempt: 1,
      source: 'webhook',
    });
  });

  it('runs success, refunding and refunded of one reference: three events, three runs', async () => {
    const { receiver, runs } = setup();
    const reference = newReference();
    for (const name of ['payment.success', 'payment.refunding', 'payment.refunded'] as const) {
      const res = await receiver.handle(signedRequest(createEvent(name, { reference }), { secret }));
      expect(res.status).toBe(200);
    }
    expect(runs.map((r) => r.event)).toEqual(['payment.success', 'payment.refunding', 'payment.refunded']);
  });

  it('keeps the same reference apart across sandbox and live', async () => {
    const { receiver, runs } = setup();
    const reference = newReference();
    await receiver.handle(signedRequest(createEvent('payment.success', { reference, mode: 'sandbox' }), { secret }));
    await receiver.handle(signedRequest(createEvent('payment.success', { reference, mode: 'live' }), { secret }));
    expect(runs).toHaveLength(2);
  });

  describe('answers 401 and runs nothing for a bad signature', () => {
    const body = JSON.stringify(createEvent('payment.success'));
    const good = sign(body, secret);
    it.each([
      ['missing', {}],
      ['wrong', { 'x-service-signature': sign(body, 'another-secret') }],
      ['malformed', { 'x-service-signature': 'sha256=abc' }],
      ['upper-case hex digits', { 'x-service-signature': `sha256=${good.slice(7).toUpperCase()}` }],
      ['without prefix', { 'x-service-signature': good.slice(7) }],
      ['upper-case header name (still the same header), wrong value', { 'X-SERVICE-SIGNATURE': 'sha256=' + '1'.repeat(64) }],
    ])('%s', async (_, headers) => {
      const { receiver, runs } = setup();
      const res = await receiver.handle(post(body, headers));
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ outcome: 'unauthorized' });
      expect(runs).toHaveLength(0);
    });

    it('duplicated (two headers, joined by fetch)', async () => {
      const { receiver, runs } = setup();
      const headers = new Headers();
      headers.append('x-service-signature', good);
      headers.append('x-service-signature', good);
      const res = await receiver.handle(post(body, {}, { headers }));
      expect(res.status).toBe(401);
      expect(runs).toHaveLength(0);
    });
  });

  it('answers 401 to a valid signature over a re-serialised body', async () => {
    const { receiver, runs } = setup();
    const original = JSON.stringify(createEvent('payment.success'), null, 2);
    const res = await receiver.handle(post(JSON.stringify(JSON.parse(original)), { 'x-service-signature': sign(original, secret) }));
    expect(res.status).toBe(401);
    expect(runs).toHaveLength(0);
  });

  it.each([
    ['malformed JSON', '{"event": "payment.success",'],
    ['a payload missing fields', JSON.stringify({ event: 'payment.success', reference: 'x' })],
    ['a wrong amount format', JSON.stringify({ ...createEvent('payment.success'), amount: '15' })],
    ['a __proto__ key', JSON.stringify(createEvent('payment.success')).replace('{', '{"__proto__":{"polluted":1},')],
    ['an escaped __proto__ key', JSON.stringify(createEvent('payment.success')).replace('{', '{"\\u005f_proto__":{"polluted":1},')],
    [
      'a constructor.prototype key',
      JSON.stringify(createEvent('payment.success')).replace('{', '{"constructor":{"prototype":{"polluted":1}},'),
    ],
    ['an array', '[1,2,3]'],
    // A length that cannot become a number: zod threw on it, and the delivery was answered 500.
    [
      'an event whose length shadows toString',
      JSON.stringify(createEvent('payment.success')).replace(/"event":"[^"]*"/, '"event":{"length":{"toString":{}}}'),
    ],
  ])('answers 400 to %s with a valid signature', async (_, body) => {
    const { receiver, runs } = setup();
    const res = await receiver.handle(post(body, { 'x-service-signature': sign(body, secret) }));
    expect(res.status).toBe(400);
    expect(runs).toHaveLength(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers 400 invalid to signed JSON that is not an event, and logs at error the fields, the reference and the way back', async () => {
    const levels: string[] = [];
    const messages: string[] = [];
    const errors: DeliveryReport[] = [];
    const receiver = createReceiver({
      secret,
      logger: (level, fields, message) => void ('outcome' in fields && (levels.push(level), messages.push(message ?? ''))),
    }).onError((_e, r) => void errors.push(r));
    const event = { ...createEvent('payment.success'), amount: 1500, currency: null };
    const res = await receiver.handle(signedRequest(event, { secret }));
    expect([res.status, await res.json()]).toEqual([400, { outcome: 'invalid' }]);
    expect(levels).toEqual(['error']);
    expect(messages[0]).toMatch(/amount .*currency|currency .*amount/);
    expect(messages[0]).toMatch(/createReconciler/);
    expect(errors).toMatchObject([{ outcome: 'invalid', reference: event.reference, event: 'payment.success' }]);
  });

  it('accepts the nullable fields the SDKs model as null, and fills those left out', async () => {
    const { receiver, runs } = setup();
    const received: unknown[] = [];
    receiver.on('payment.failed', (e) => void received.push(e));
    const { serviceFee: _fee, ...event } = {
      ...createEvent('payment.failed'),
      paymentMethod: null,
      paidAt: null,
      customer: { name: null, email: null, phone: '+251911234567' },
    };
    const res = await receiver.handle(signedRequest(event, { secret }));
    expect(res.status).toBe(200);
    expect(runs).toHaveLength(1);
    expect(received[0]).toMatchObject({ serviceFee: null, paymentMethod: null, customer: { email: null, phone: '+251911234567' } });
  });

  it('answers 400 to invalid UTF-8 with a valid signature', async () => {
    const { receiver } = setup();
    const bytes = new Uint8Array([...Buffer.from('{"event":"payment.success","x":"'), 0xff, 0xfe, ...Buffer.from('"}')]);
    const res = await receiver.handle(post(bytes, { 'x-service-signature': sign(bytes, secret) }));
    expect(res.status).toBe(400);
  });

  it('passes unknown extra fields through to the handler', async () => {
    const { receiver } = setup();
    let seen: unknown;
    receiver.on('payment.success', (event) => {
      seen = (event as unknown as Record<string, unknown>).riskScore;
    });
    const res = await receiver.handle(signedRequest({ ...createEvent('payment.success'), riskScore: 7 }, { secret }));
    expect(res.status).toBe(200);
    expect(seen).toBe(7);
  });

  it('answers 408 and cancels the body when it is still arriving after bodyTimeoutMs, before any signature work', async () => {
    const clock = manualClock(0);
    const { receiver, runs, reports } = setup({ clock, bodyTimeoutMs: 1_000 });
    let cancelled = false;
    // One byte, then nothing: a sender that never finishes.
    const body = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(new Uint8Array([0x7b])),
      cancel: () => void (cancelled = true),
    });
    const answer = watch(
      receiver.handle(new Request('http://127.0.0.1/webhooks', { method: 'POST', body, duplex: 'half' } as RequestInit)),
    );
    await clock.advance(999);
    expect(answer.settled).toBe(false);
    await clock.advance(1);
    const res = await answer.promise;
    expect([res.status, res.headers.get('connection'), await res.text()]).toEqual([408, 'close', '{"outcome":"too-slow"}']);
    expect(cancelled).toBe(true);
    expect(runs).toHaveLength(0);
    expect(reports.map((r) => r.outcome)).toEqual(['too-slow']);
  });

  /** A signed event with an extra field holding `levels` nested arrays: the event is level 1. */
  const nested = (levels: number, prefix = '') => {
    const json = JSON.stringify({ ...createEvent('payment.success'), extra: 0 }).replace(
      '"extra":0',
      `"extra":${'['.repeat(levels)}${']'.repeat(levels)}`,
    );
    return prefix + json;
  };

  it.each([
    ['a 100,000-deep array', nested(100_000)],
    ['one level past the limit', nested(64)],
    ['a deep array behind a byte-order mark', nested(100, '\ufeff')],
  ])('answers 400 to %s in an extra field, with a valid signature, and reports why', async (_, body) => {
    const { receiver, runs, reports } = setup();
    const res = await receiver.handle(post(body, { 'x-service-signature': sign(body, secret) }));
    expect(res.status).toBe(400);
    expect(await res.text()).toBe('{"outcome":"malformed"}');
    expect(runs).toHaveLength(0);
    expect(String((reports.at(-1)!.err as Error).message)).toMatch(/deeper than 64 levels/);
  });

  it('passes an event nested exactly 64 levels deep', async () => {
    const { receiver, runs } = setup();
    const body = nested(63);
    expect((await receiver.handle(post(body, { 'x-service-signature': sign(body, secret) }))).status).toBe(200);
    expect(runs).toHaveLength(1);
  });

  it('still finds an escaped __proto__ key deeper than the fast walk used to look', async () => {
    const { receiver, runs } = setup();
    const deep = `${'{"a":'.repeat(40)}{"\\u005f_proto__":{"polluted":1}}${'}'.repeat(40)}`;
    const body = JSON.stringify({ ...createEvent('payment.success'), extra: 0 }).replace('"extra":0', `"extra":${deep}`);
    expect((await receiver.handle(post(body, { 'x-service-signature': sign(body, secret) }))).status).toBe(400);
    expect(runs).toHaveLength(0);
  });

  it('answers 413 to a body over the limit, before any signature work', async () => {
    const { receiver, runs } = setup({ maxBodyBytes: 1_000 });
    const big = JSON.stringify({ ...createEvent('payment.success'), pad: 'x'.repeat(2_000) });
    const res = await receiver.handle(post(big, { 'x-service-signature': sign(big, secret) }));
    expect(res.status).toBe(413);
    expect(runs).toHaveLength(0);
  });

  it('answers 413 to a streamed body without Content-Length', async () => {
    const { receiver } = setup({ maxBodyBytes: 1_000 });
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        // Endless as far as a correct receiver can tell: it must stop reading once the limit is
        // passed. A receiver that does not stop sees the stream end after 100 chunks (30 kB),
        // so a broken count fails this test at once instead of filling the worker's memory.
        if (pulled > 100) return controller.close();
        controller.enqueue(new Uint8Array(300).fill(0x20));
      },
    });
    const req = post(stream, { 'x-service-signature': 'sha256=' + '0'.repeat(64) }, { duplex: 'half' } as RequestInit);
    expect(req.headers.get('content-length')).toBeNull();
    const res = await receiver.handle(req);
    expect(res.status).toBe(413);
    expect(pulled).toBeLessThan(10);
  });

  it('answers 413 when Content-Length lies low', async () => {
    const { receiver } = setup({ maxBodyBytes: 1_000 });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(5_000).fill(0x20));
        controller.close();
      },
    });
    const req = post(stream, { 'content-length': '10' }, { duplex: 'half' } as RequestInit);
    const res = await receiver.handle(req);
    expect(res.status).toBe(413);
  });

  it('answers 405 to GET, with Allow', async () => {
    const { receiver } = setup();
    const res = await receiver.handle(new Request('http://127.0.0.1/webhooks'));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('answers 500 at once when something already read the request body', async () => {
    const { receiver, reports } = setup();
    const req = signedRequest(createEvent('payment.success'), { secret });
    await req.text();
    const res = await receiver.handle(req);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('parser');
    expect(String(reports.at(-1)?.err)).toMatch(/^Error: \[@payhook\/core\] the request body was already read/);
  });

  it('answers 200 to an event name the service does not define, and runs nothing', async () => {
    const { receiver, runs } = setup();
    const res = await receiver.handle(signedRequest({ ...createEvent('payment.success'), event: 'payment.disputed' }, { secret }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ outcome: 'ignored' });
    expect(runs).toHaveLength(0);
  });

  it('answers 200 to an event nobody handles, without touching the store', async () => {
    const store = memoryStore();
    const claim = vi.spyOn(store, 'claim');
    const receiver = createReceiver({ secret, store, logger: quiet }).on('payment.success', () => {});
    const res = await receiver.handle(signedRequest(createEvent('payment.failed'), { secret }));
    expect(res.status).toBe(200);
    expect(claim).not.toHaveBeenCalled();
  });

  it('routes to handlers of one event, of several, and to onAny after them', async () => {
    const calls: string[] = [];
    const receiver = createReceiver({ secret, logger: quiet })
      .onAny((e) => void calls.push(`any:${e.event}`))
      .on('payment.success', () => void calls.push('success'))
      .on(['payment.refunded', 'payment.reversed'], (e) => void calls.push(`returned:${e.event}`));
    const reference = newReference();
    for (const event of ['payment.success', 'payment.reversed'] as const) {
      await receiver.handle(signedRequest(createEvent(event, { reference }), { secret }));
    }
    expect(calls).toEqual(['success', 'any:payment.success', 'returned:payment.reversed', 'any:payment.reversed']);
  });

  it('answers 500 to a throwing handler, without its message, and runs it again on the next delivery', async () => {
    const { receiver, store, runs } = setup();
    const errors: unknown[] = [];
    receiver.onError((e) => errors.push(e));
    let fail = true;
    receiver.on('payment.success', () => {
      if (fail) throw new Error('database connection refused at 10.0.0.5');
    });
    const event = createEvent('payment.success');
    const res = await receiver.handle(signedRequest(event, { secret }));
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('10.0.0.5');
    expect(errors).toHaveLength(1);
    expect(await store.get(`sandbox:${event.reference}:payment.success`)).toMatchObject({ state: 'released' });

    fail = false;
    const retry = await receiver.handle(signedRequest(event, { secret }));
    expect(retry.status).toBe(200);
    expect(runs.at(-1)!.ctx).toMatchObject({ redelivery: true, attempt: 2 });
  });

  it('marks a NonRetriableError done with an error, answers 200, reports it, and never runs it again', async () => {
    const { receiver, store } = setup();
    const errors: unknown[] = [];
    receiver.onError((e) => errors.push(e));
    let calls = 0;
    receiver.on('payment.success', () => {
      calls += 1;
      throw new NonRetriableError('no such order');
    });
    const event = createEvent('payment.success');
    const res = await receiver.handle(signedRequest(event, { secret }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ outcome: 'rejected' });
    expect(errors[0]).toBeInstanceOf(NonRetriableError);
    expect(await store.get(`sandbox:${event.reference}:payment.success`)).toMatchObject({ state: 'done', outcome: 'rejected' });
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(200);
    expect(calls).toBe(1);
  });

  // Time below is the receiver's injected clock: the budget, the keep-alive and the handlers'
  // durations are exact virtual milliseconds, and nothing waits for real.
  it('takes a body of exactly 1 MiB by default, and answers 413 to one byte more', async () => {
    const { receiver } = setup();
    const runs: string[] = [];
    receiver.on('payment.success', (e) => void runs.push(e.reference));
    for (const [bytes, status] of [
      [1024 * 1024, 200],
      [1024 * 1024 + 1, 413],
    ] as const) {
      const event = createEvent('payment.success');
      const json = JSON.stringify(event);
      // JSON allows the padding after the value.
      const res = await receiver.handle(signedRequest(json + ' '.repeat(bytes - json.length), { secret }));
      expect([res.status, runs.includes(event.reference)], `${bytes} bytes`).toEqual([status, status === 200]);
    }
  });

  it('answers 202 at 8000 ms by default, 2 s inside the service timeout', async () => {
    const clock = manualClock(0);
    const { receiver } = setup({ store: memoryStore({ now: clock.now }), clock });
    receiver.on('payment.success', () => clock.sleep(9_000));
    const answer = watch(receiver.handle(signedRequest(createEvent('payment.success'), { secret })));
    await clock.advance(7_999);
    expect(answer.settled).toBe(false);
    await clock.advance(1);
    expect(answer.settled).toBe(true);
    expect((await answer.promise).status).toBe(202);
    await clock.advance(1_000);
  });

  it('answers 202 exactly when the budget runs out, 409 to a copy while the handler runs, then records and reports its outcome', async () => {
    const clock = manualClock(0);
    // `retry`: the copy is answered 409 at once (the waiting copy is in duplicate-wait.test.ts).
    const { receiver, store, reports } = setup({ store: memoryStore({ now: clock.now }), budgetMs: 200, clock, onInProgress: 'retry' });
    let runs = 0;
    receiver.on('payment.success', async () => {
      runs += 1;
      await clock.sleep(600);
    });
    const event = createEvent('payment.success');
    const key = `sandbox:${event.reference}:payment.success`;
    const answer = watch(receiver.handle(signedRequest(event, { secret })));
    await clock.advance(199);
    expect(answer.settled).toBe(false);
    await clock.advance(1);
    const res = await answer.promise;
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ outcome: 'accepted' });
    expect(await store.get(key)).toMatchObject({ state: 'claimed' });
    // A duplicate during the run is told to come back later.
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(409);
    await clock.advance(399);
    expect(await store.get(key)).toMatchObject({ state: 'claimed' });
    await clock.advance(1); // t = 600: the handler returns
    expect(await store.get(key)).toMatchObject({ state: 'done', outcome: 'ok' });
    expect(reports.filter((r) => r.late)).toEqual([
      expect.objectContaining({ outcome: 'processed', status: 200, late: true, reference: event.reference }),
    ]);
    // The service's redelivery of the 202'd event finds it done.
    expect(await (await receiver.handle(signedRequest(event, { secret }))).json()).toEqual({ outcome: 'duplicate' });
    expect(runs).toBe(1);
  });

  it('keeps the claim alive past its lease while a slow handler runs', async () => {
    const clock = manualClock(0);
    const store = memoryStore({ now: clock.now });
    const receiver = createReceiver({ secret, store, budgetMs: 50, leaseMs: 150, clock, logger: quiet, onInProgress: 'retry' });
    let runs = 0;
    receiver.on('payment.success', async () => {
      runs += 1;
      await clock.sleep(600);
    });
    const event = createEvent('payment.success');
    const answer = receiver.handle(signedRequest(event, { secret }));
    await clock.advance(50);
    expect((await answer).status).toBe(202);
    // t = 400: the 150 ms lease taken at 0 would have lapsed at 150 without the keep-alive (every 50 ms).
    await clock.advance(350);
    expect(await store.get(`sandbox:${event.reference}:payment.success`)).toMatchObject({ state: 'claimed', leaseExpiresAt: 550 });
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(409);
    await clock.advance(300);
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('releases the claim and reports a handler that fails after its 202', async () => {
    const clock = manualClock(0);
    const store = memoryStore({ now: clock.now });
    const late: DeliveryReport[] = [];
    const receiver = createReceiver({ secret, store, budgetMs: 50, clock, logger: quiet }).onError((_, r) => late.push(r));
    receiver.on('payment.success', async () => {
      await clock.sleep(150);
      throw new Error('boom');
    });
    const event = createEvent('payment.success');
    const answer = receiver.handle(signedRequest(event, { secret }));
    await clock.advance(50);
    expect((await answer).status).toBe(202);
    await clock.advance(99);
    expect(late).toEqual([]);
    await clock.advance(1); // t = 150: the handler throws
    expect(late).toEqual([expect.objectContaining({ outcome: 'failed', late: true, reference: event.reference })]);
    expect(await store.get(`sandbox:${event.reference}:payment.success`)).toMatchObject({ state: 'released' });
  });

  it('runs the handler once for 20 concurrent deliveries of the same bytes, with no 5xx', async () => {
    // The run holds until the 19 copies were answered, so every copy arrives while it runs.
    let refused = 0;
    let othersAnswered!: () => void;
    const held = new Promise<void>((r) => (othersAnswered = r));
    const count = (r: DeliveryReport) => {
      if (r.outcome === 'in-progress' && ++refused === 19) othersAnswered();
    };
    // The copies are refused at once (`retry`); with the default `wait` none is (duplicate-wait.test.ts).
    const receiver = createReceiver({ secret, logger: { ...quiet, info: count }, onInProgress: 'retry' });
    let runs = 0;
    receiver.on('payment.success', async () => {
      runs += 1;
      await held;
    });
    const body = JSON.stringify(createEvent('payment.success'));
    const { headers } = signedBody(body, { secret });
    const responses = await Promise.all(Array.from({ length: 20 }, () => receiver.handle(post(body, headers))));
    const statuses = responses.map((r) => r.status);
    expect(runs).toBe(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
  });

  it('accepts any of several secrets and tells the handler which matched', async () => {
    const { receiver, runs } = setup({ secret: ['whsec_new', secret] });
    expect((await receiver.handle(signedRequest(createEvent('payment.success'), { secret }))).status).toBe(200);
    expect((await receiver.handle(signedRequest(createEvent('payment.success'), { secret: 'whsec_new' }))).status).toBe(200);
    expect(runs.map((r) => r.ctx.secretIndex)).toEqual([1, 0]);
  });

  it('uses a custom dedupe key', async () => {
    const { receiver, runs } = setup({ dedupeKey: (e) => e.reference });
    const reference = newReference();
    await receiver.handle(signedRequest(createEvent('payment.success', { reference }), { secret }));
    await receiver.handle(signedRequest(createEvent('payment.refunded', { reference }), { secret }));
    expect(runs).toHaveLength(1);
  });

  it('answers 503 when the store throws, and runs the event once the store is back', async () => {
    const inner = memoryStore();
    let down = true;
    const flaky: Store = {
      ...inner,
      claim: (k, l) => (down ? Promise.reject(new Error('ECONNREFUSED')) : inner.claim(k, l)),
    };
    const { receiver, runs, reports } = setup({ store: flaky });
    const event = createEvent('payment.success');
    const res = await receiver.handle(signedRequest(event, { secret }));
    expect(res.status).toBe(503);
    expect(await res.text()).not.toContain('ECONNREFUSED');
    expect(reports.at(-1)).toMatchObject({ outcome: 'store-unavailable', reference: event.reference });
    down = false;
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(200);
    expect(runs).toHaveLength(1);
  });

  it('keeps trying to record a done event when the store fails after the handler ran, so a copy never runs it twice', async () => {
    const { clock, inner, flaky } = failingCompletes(2);
    const { receiver, runs } = setup({ store: flaky, clock, onInProgress: 'retry' });
    const event = createEvent('payment.success');
    const key = `sandbox:${event.reference}:payment.success`;
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(200);
    // A copy while the record is being retried: the claim is still held, so it is told to come back.
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(409);
    // Retried in the background 250 ms after the failed write (fails again), then 500 ms after that.
    await clock.advance(250);
    expect(await inner.get(key)).toMatchObject({ state: 'claimed' });
    await clock.advance(499);
    expect(await inner.get(key)).toMatchObject({ state: 'claimed' });
    await clock.advance(1);
    expect(await inner.get(key)).toMatchObject({ state: 'done', outcome: 'ok' });
    expect(await (await receiver.handle(signedRequest(event, { secret }))).json()).toEqual({ outcome: 'duplicate' });
    expect(runs).toHaveLength(1);
  });

  it('retries the done record inside a short lease, after extending it, so the lease never lapses between tries', async () => {
    const { clock, inner, flaky } = failingCompletes(1);
    const { receiver, runs } = setup({ store: flaky, clock, budgetMs: 50, leaseMs: 150 });
    const event = createEvent('payment.success');
    const key = `sandbox:${event.reference}:payment.success`;
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(200);
    // The first retry comes at leaseMs / 3, not after the lease (150 ms) has run out.
    await clock.advance(49);
    expect(await inner.get(key)).toMatchObject({ state: 'claimed' });
    await clock.advance(1);
    expect(await inner.get(key)).toMatchObject({ state: 'done', outcome: 'ok' });
    await clock.advance(150);
    expect(await (await receiver.handle(signedRequest(event, { secret }))).json()).toEqual({ outcome: 'duplicate' });
    expect(runs).toHaveLength(1);
  });

  it('answers 503 exactly at the budget when the store hangs, and gives a late claim back', async () => {
    const clock = manualClock(0);
    const inner = memoryStore({ now: clock.now });
    const slow: Store = { ...inner, claim: async (k, l) => (await clock.sleep(400), inner.claim(k, l)) };
    const receiver = createReceiver({ secret, store: slow, budgetMs: 100, clock, logger: quiet }).on('payment.success', () => {});
    const event = createEvent('payment.success');
    const answer = watch(receiver.handle(signedRequest(event, { secret })));
    await clock.advance(99);
    expect(answer.settled).toBe(false);
    await clock.advance(1);
    expect((await answer.promise).status).toBe(503);
    await clock.advance(300); // t = 400: the claim lands after the 503
    expect(await inner.get(`sandbox:${event.reference}:payment.success`)).toMatchObject({ state: 'released' });
  });

  it('dispatches a recovered event through the same store, once', async () => {
    const { receiver, runs } = setup();
    const event = createEvent('payment.success');
    expect(await receiver.dispatch(event)).toMatchObject({ outcome: 'processed', status: 200 });
    expect(runs[0]!.ctx).toMatchObject({ source: 'reconcile', secretIndex: null });
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(200);
    expect(await receiver.dispatch(event)).toMatchObject({ outcome: 'duplicate' });
    expect(runs).toHaveLength(1);
  });

  it('reports every outcome with reference, event and key', async () => {
    const { receiver, reports } = setup();
    const event = createEvent('payment.success');
    await receiver.handle(signedRequest(event, { secret }));
    await receiver.handle(signedRequest(event, { secret }));
    expect(reports.map((r) => [r.outcome, r.status, r.reference, r.event, r.dedupeKey])).toEqual([
      ['processed', 200, event.reference, 'payment.success', `sandbox:${event.reference}:payment.success`],
      ['duplicate', 200, event.reference, 'payment.success', `sandbox:${event.reference}:payment.success`],
    ]);
  });

  it.each([
    [{ budgetMs: 10_000 }, /budgetMs must be above 0 and below 10000/],
    [{ budgetMs: 0 }, /budgetMs/],
    [{ secret: '' }, /`secret` must be/],
    [{ secret: [] }, /`secret` must be/],
    [{ leaseMs: 1_000, budgetMs: 2_000 }, /leaseMs \(1000\) must be longer than budgetMs/],
    [{ maxBodyBytes: -1 }, /maxBodyBytes/],
    [{ bodyTimeoutMs: 0 }, /bodyTimeoutMs must be a positive number/],
    [{ bodyTimeoutMs: Number.NaN }, /bodyTimeoutMs/],
  ] as [Partial<ReceiverOptions>, RegExp][])('rejects bad options %j with a message that starts with the package', (opts, message) => {
    expect(() => createReceiver({ secret, ...opts })).toThrow(message);
    expect(() => createReceiver({ secret, ...opts })).toThrow(/^\[@payhook\/core\]/);
  });
});
