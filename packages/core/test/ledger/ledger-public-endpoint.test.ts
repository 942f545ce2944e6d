import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, eraseDeliveries, memoryStore, NonRetriableError, type LedgerEntry } from '../../src/index.js';
import type { Ledger } from '../../src/store.js';
import { MAX_LEDGER_PAGE } from '../../src/storage/ledger.js';
import { createLedgerWriter } from '../../src/ledger/ledger-writer.js';
import type { Trace } from '../../src/contracts/delivery.js';
import { REFUSALS_PER_MINUTE } from '../../src/base/per-minute.js';
import { prefixOf } from '../../src/ledger/ledger-record.js';
import { reportOf } from '../../src/observing/outcome.js';
import { captureWaitUntil } from '@payhook/test-support/wait';

const secret = 'whsec_public';
const quiet = { info() {}, warn() {}, error() {} };
const DAY = 24 * 60 * 60 * 1000;
const MiB = 1024 * 1024;

function setup(ledger: NonNullable<Parameters<typeof memoryStore>[0]>['ledger'] = true, keepLogs = true) {
  const clock = manualClock(1_700_000_000_000);
  const logs: { level: string; message: string }[] = [];
  const store = memoryStore({ clock, ledger });
  const logger = keepLogs ? (level: string, _fields: unknown, message: string) => void logs.push({ level, message }) : quiet;
  const receiver = createReceiver({ secret, store, clock, budgetMs: 200, leaseMs: 1_000, logger });
  // The ledger writes after the answer: `written()` awaits the writer's idle(), which the receiver hands the platform's waitUntil.
  const { waitUntil, settled: written } = captureWaitUntil();
  const handle = (request: Request) => receiver.handle(request, { waitUntil });
  const post = async (body: BodyInit, headers: Record<string, string> = {}) =>
    (await handle(new Request('http://x/', { method: 'POST', body, headers }))).status;
  return { clock, store, ledger: store.ledger!, receiver, handle, post, logs, written };
}

describe('refusals in the ledger: metadata only, bounded on their own', () => {
  it('records a refusal without its body: its SHA-256 and a printable prefix; every untrusted field is cut', async () => {
    const { ledger, post, written } = setup();
    const small = JSON.stringify({ event: 'payment.success', reference: 'R'.repeat(300) });
    expect(await post(small, { 'x-service-signature': `sha256=${'0'.repeat(64)}${'x'.repeat(500)}` })).toBe(401);
    const big = new Uint8Array(MiB).fill(0x41);
    big.set(new TextEncoder().encode('\u0000\u001b[31m\u202eevil\u2028\u0085é😀'));
    expect(await post(big)).toBe(401);
    await written();
    const [bigRecord, smallRecord] = (await ledger.list()) as [LedgerEntry, LedgerEntry];
    expect(smallRecord).toMatchObject({
      signature: 'invalid',
      outcome: 'unauthorized',
      event: 'payment.success',
      bodySha256: createHash('sha256').update(small).digest('hex'),
    });
    expect(smallRecord.reference).toBe(`${'R'.repeat(127)}…`);
    expect(smallRecord.signatureHeader).toHaveLength(80);
    expect(smallRecord.body).toBeUndefined();
    expect(bigRecord.body).toBeUndefined();
    expect(bigRecord.bodySha256).toBe(createHash('sha256').update(big).digest('hex'));
    const escaped = '\\u0000\\u001b[31m\\u202eevil\\u2028\\u0085é😀';
    expect(bigRecord.bodyPrefix).toBe(escaped + 'A'.repeat(64 - escaped.length));
    expect(bigRecord.bodyPrefix!.length).toBeLessThanOrEqual(64);
    // Over 4 KiB, an unverified body is not parsed for names.
    expect(bigRecord.reference).toBeUndefined();
    expect(JSON.stringify(bigRecord).length).toBeLessThan(1024);
  });

  it('escapes every control, C1 and bidi character, and never cuts an escape or a surrogate pair', () => {
    expect(prefixOf('a\u007f\u0080\u009f\u061c\u200e\u200f\u2066\u2069\ufeffb')).toBe(
      'a\\u007f\\u0080\\u009f\\u061c\\u200e\\u200f\\u2066\\u2069\\ufeffb',
    );
    expect(prefixOf('\u0001'.repeat(40))).toBe('\\u0001'.repeat(10));
    expect(prefixOf(`${'a'.repeat(63)}😀`)).toBe('a'.repeat(63));
    expect(prefixOf(new Uint8Array([0xff, 0xfe, 0x41]))).toBe('\ufffd\ufffdA');
    // A deeply nested unsigned body costs nothing and throws nothing.
    expect(prefixOf('['.repeat(100_000))).toBe('['.repeat(64));
  });

  it('keeps refusals apart from accepted records: a flood of 1 MiB unsigned bodies evicts nothing and holds under 1 KiB each', async () => {
    // The real clock: a manual one holds every timer it was given (and what they hold) until it is advanced.
    const store = memoryStore({ ledger: { maxEntries: 10, maxRefusals: 550 } });
    const ledger = store.ledger!;
    const receiver = createReceiver({ secret, store, logger: quiet });
    const { waitUntil, settled: written } = captureWaitUntil();
    const post = async (body: BodyInit) =>
      (await receiver.handle(new Request('http://x/', { method: 'POST', body }), { waitUntil })).status;
    receiver.on('payment.success', () => {});
    for (let i = 0; i < 10; i++)
      await receiver.handle(signedRequest(createEvent('payment.success', { reference: `ok${i}` }), { secret }), { waitUntil });
    const body = new Uint8Array(MiB).fill(0x7b);
    // Warm up: the first refusals set up what every delivery shares (the diagnosis, the writer).
    for (let i = 0; i < 20; i++) await post(body);
    await written();
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const used = async () => {
      // Twice, a turn apart: what finalizers free on the first is collected on the second.
      gc();
      await new Promise((resolve) => setImmediate(resolve));
      gc();
      const m = process.memoryUsage();
      return { heap: m.heapUsed, buffers: m.arrayBuffers };
    };
    const before = await used();
    const flood = 500;
    for (let i = 0; i < flood; i++) expect(await post(body)).toBe(401);
    await written();
    const after = await used();
    const [buffers, heap] = [(after.buffers - before.buffers) / flood, (after.heap - before.heap) / flood];
    const record = JSON.stringify((await ledger.list({ outcome: 'unauthorized' }))[0]).length;
    console.info(
      `[ledger-memory] ${flood} refusals of 1 MiB kept: ${buffers.toFixed(0)} B of buffers and ${heap.toFixed(0)} B of heap each (heap after a full GC, noisy); a record is ${record} B as JSON`,
    );
    // A body kept would be 1 MiB of buffers each.
    expect(buffers).toBeLessThan(1024);
    expect(heap).toBeLessThan(1024);
    expect(record).toBeLessThan(1024);
    expect((await ledger.list({ outcome: 'unauthorized', limit: 1000 })).length).toBe(520);
    // Past maxRefusals, the oldest refusals go, and still no accepted record.
    for (let i = 0; i < 100; i++) await post(body);
    await written();
    expect((await ledger.list({ outcome: 'unauthorized', limit: 1000 })).length).toBe(550);
    expect((await ledger.list({ outcome: 'processed', limit: 1000 })).map((e) => e.reference).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `ok${i}`),
    );
  });

  it(`records at most ${REFUSALS_PER_MINUTE} refusals a minute, and says once a minute how many it skipped`, async () => {
    const { clock, ledger, receiver, handle, post, logs, written } = setup({ maxRefusals: 5_000 });
    receiver.on('payment.success', () => {});
    for (let i = 0; i < REFUSALS_PER_MINUTE + 100; i++) await post('{}');
    await handle(signedRequest(createEvent('payment.success', { reference: 'during' }), { secret }));
    await written();
    expect((await ledger.list({ outcome: 'unauthorized', limit: 1000 })).length).toBe(REFUSALS_PER_MINUTE);
    expect((await ledger.list({ reference: 'during' })).length).toBe(1);
    const skipped = () => logs.filter((l) => l.level === 'warn' && /not recorded in the ledger/.test(l.message)).map((l) => l.message);
    expect(skipped()).toEqual([]);
    await clock.advance(60_000);
    await post('{}');
    await written();
    const warns = skipped();
    expect(warns).toEqual([
      expect.stringMatching(
        /^\[@payhook\/core\] 100 refused deliveries \(unsigned or unreadable requests\) were not recorded in the ledger in the minute from .*at most 600 a minute/,
      ),
    ]);
    expect((await ledger.list({ outcome: 'unauthorized', limit: 1000 })).length).toBe(REFUSALS_PER_MINUTE + 1);
  });
});

describe('one bad record never sinks a batch', () => {
  const t0 = Date.now();
  const trace = (i: number, receivedAt = t0 + i): Trace => ({
    id: `${String(i).padStart(4, '0')}`,
    receivedAt,
    source: 'webhook',
    body: '{}',
    verified: true,
  });
  const report = () => ({ ...reportOf('processed'), reference: 'R', event: 'payment.success' });
  const logger = () => {
    const lines: string[] = [];
    return { lines, log: { write: (_level: string, _fields: unknown, message: string) => void lines.push(message) } };
  };

  it('writes the rest of a batch one by one when the memory ledger refuses a record (no receivedAt in epoch ms)', async () => {
    const ledger = memoryStore({ ledger: true }).ledger!;
    const { lines, log } = logger();
    const writer = createLedgerWriter(ledger, log as never, () => t0);
    for (let i = 0; i < 30; i++) writer.answered(trace(i, i === 7 ? Number.NaN : t0 + i), report());
    await writer.idle();
    const kept = await ledger.list({ limit: 100 });
    expect(kept.length).toBe(29);
    expect(kept.map((e) => e.id)).not.toContain('0007');
    expect(lines).toEqual([
      expect.stringMatching(
        /^\[@payhook\/core\] the ledger refused 1 of 30 records written together \(\[@payhook\/core\] memoryStore: ledger record "0007" has receivedAt NaN/,
      ),
    ]);
  });

  it('stops after 3 refusals in a row, taking the store for down: the rest are counted lost', async () => {
    let calls = 0;
    const append = async () => {
      calls += 1;
      throw new Error('ECONNREFUSED');
    };
    const down: Ledger = {
      body: 'keep',
      append,
      update: async () => {},
      get: async () => undefined,
      list: async () => [],
      remove: async () => 0,
    };
    const { lines, log } = logger();
    const writer = createLedgerWriter(down, log as never, () => 0);
    for (let i = 0; i < 30; i++) writer.answered(trace(i), report());
    await writer.idle();
    expect(calls).toBe(1 + 3);
    expect(lines).toEqual([
      expect.stringMatching(/could not record 30 deliveries; they are missing from it.*Check the store's connection/),
    ]);
  });
});

describe('retention and erasure on the memory store', () => {
  it('drops records past their retention on its own timer, with no delivery following; open dead letters last their own retention', async () => {
    const { clock, ledger, receiver, handle, written } = setup({ retentionMs: 60_000, deadLetterRetentionMs: 300_000 });
    receiver.on('payment.success', (e) => {
      if (e.reference === 'dead') throw new NonRetriableError('no such order');
    });
    await handle(signedRequest(createEvent('payment.success', { reference: 'plain' }), { secret }));
    await handle(signedRequest(createEvent('payment.success', { reference: 'dead' }), { secret }));
    await written();
    const [dead, plain] = (await ledger.list()) as [LedgerEntry, LedgerEntry];
    await clock.advance(120_000);
    // remove() counts what the ledger still holds: the trim dropped the plain record from memory.
    expect(await ledger.remove([plain.id])).toBe(0);
    expect((await ledger.list({ deadLetters: 'open' })).map((e) => e.id)).toEqual([dead.id]);
    await clock.advance(240_000);
    expect(await ledger.list({ deadLetters: 'open' })).toEqual([]);
    expect(await ledger.remove([dead.id])).toBe(0);
  });

  it('keeps a rejected event done past its dead letter: re-posting the stored bytes answers duplicate after every expiry', async () => {
    const { clock, store, ledger, receiver, handle, post, written } = setup({ retentionMs: DAY, deadLetterRetentionMs: 2 * DAY });
    let runs = 0;
    receiver.on('payment.success', () => {
      runs += 1;
      throw new NonRetriableError('unknown order');
    });
    await handle(signedRequest(createEvent('payment.success', { reference: 'DL' }), { secret }));
    await written();
    const [dead] = await ledger.list({ deadLetters: 'open' });
    const bytes = { body: dead!.body!, header: dead!.signatureHeader! };
    // The memory store keeps done records 24 h; this one a day past the dead letters' 2 days.
    await clock.advance(2 * DAY + 120_000);
    expect(await ledger.list({ deadLetters: 'open' })).toEqual([]);
    expect(await store.get(dead!.dedupeKey!)).toMatchObject({ state: 'done', outcome: 'rejected' });
    expect(await post(bytes.body, { 'x-service-signature': bytes.header })).toBe(200);
    await written();
    expect((await ledger.list({ reference: 'DL' }))[0]).toMatchObject({ outcome: 'duplicate' });
    expect(runs).toBe(1);
    await clock.advance(DAY);
    expect(await store.get(dead!.dedupeKey!)).toBeUndefined();
  });

  it(`erases past the first page of ${MAX_LEDGER_PAGE}: every record of a customer and of a payment, counted, and nothing else`, async () => {
    const clock = manualClock(1_700_000_000_000);
    const ledger = memoryStore({ clock, ledger: true }).ledger!;
    const t0 = clock.now();
    let n = 0;
    const record = (reference: string, email: string): LedgerEntry => {
      n += 1;
      const event = createEvent('payment.success', { reference, customer: { email } });
      return {
        id: String(n).padStart(6, '0'),
        receivedAt: t0 + n,
        source: 'webhook',
        reference,
        event: event.event,
        outcome: 'processed',
        status: 200,
        durationMs: 1,
        signature: 'valid',
        body: JSON.stringify(event),
        bodyEncoding: 'utf8',
      };
    };
    const ada = (count: number) => Array.from({ length: count }, () => record(`ref_ada_${n}`, 'ada@example.com'));
    // Written oldest first. Read newest first, an erase by email meets a full page of Ada's, then a page with none of
    // hers (Bob's), then Carol's and the rest of Ada's: 6,200 records, 7 pages.
    const written = [
      ...ada(1_250),
      ...Array.from({ length: 1_200 }, () => record(`ref_carol_${n}`, 'carol@example.com')),
      ...Array.from({ length: 2_500 }, () => record('ref_many', 'bob@example.com')),
      ...ada(1_250),
    ];
    for (let i = 0; i < written.length; i += 500) await ledger.append(written.slice(i, i + 500));
    /** Every record the ledger holds, page by page. */
    const all = async () => {
      const kept: LedgerEntry[] = [];
      for (let page = await ledger.list({ limit: MAX_LEDGER_PAGE }); page.length > 0; ) {
        kept.push(...page);
        page = await ledger.list({ limit: MAX_LEDGER_PAGE, before: page.at(-1)!.id });
      }
      return kept;
    };
    const emails = async () => (await all()).map((e) => JSON.parse(e.body!).customer.email as string);
    const count = (list: string[], email: string) => list.filter((x) => x === email).length;
    expect(await emails()).toHaveLength(written.length);

    expect(await eraseDeliveries(ledger, { email: 'ADA@example.com' })).toEqual({ erased: 2_500 });
    const afterEmail = await emails();
    expect(count(afterEmail, 'ada@example.com')).toBe(0);
    expect([count(afterEmail, 'bob@example.com'), count(afterEmail, 'carol@example.com')]).toEqual([2_500, 1_200]);

    expect(await eraseDeliveries(ledger, { reference: 'ref_many' })).toEqual({ erased: 2_500 });
    expect(await ledger.list({ reference: 'ref_many' })).toEqual([]);
    const left = await all();
    expect(left).toHaveLength(1_200);
    expect(left.every((e) => e.reference!.startsWith('ref_carol_'))).toBe(true);
  });

  it('erases a customer by email or phone, and a payment by reference, open dead letters included', async () => {
    const { ledger, receiver, handle, post, written } = setup();
    receiver.on('payment.success', (e) => {
      if (e.reference === 'P3') throw new NonRetriableError('no');
    });
    const send = (reference: string, email: string | null, phone: string | null) =>
      handle(signedRequest(createEvent('payment.success', { reference, customer: { name: 'A', email, phone } } as never), { secret }));
    await send('P1', 'Ada@Example.com', '+234 801 000 0001');
    await send('P2', 'bob@example.com', '08010000002');
    await send('P3', 'ada@example.com', null);
    await send('P4', null, '+2348010000001');
    await post(JSON.stringify({ reference: 'P2', customer: { email: 'bob@example.com' } }));
    await written();
    expect((await ledger.list({ limit: 100 })).length).toBe(5);
    expect(await eraseDeliveries(ledger, { email: ' ada@EXAMPLE.com' })).toEqual({ erased: 2 });
    expect((await ledger.list({ deadLetters: 'open' })).length).toBe(0);
    expect(await eraseDeliveries(ledger, { phone: '234-801-000-0001' })).toEqual({ erased: 1 });
    expect(await eraseDeliveries(ledger, { reference: 'P2' })).toEqual({ erased: 2 });
    expect(await ledger.list({ limit: 100 })).toEqual([]);
    await expect(eraseDeliveries(ledger, {})).rejects.toThrow(/^\[@payhook\/core\] eraseDeliveries needs a reference, an email or a phone/);
  });
});
