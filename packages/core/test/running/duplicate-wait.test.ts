import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedBody, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, type ReceiverOptions } from '../../src/index.js';
import { spiedStore } from '../spied-store.js';

const secret = 'whsec_wait';
const quiet = { info() {}, warn() {}, error() {} };

function setup(options: Partial<ReceiverOptions> = {}) {
  const clock = manualClock(0);
  const receiver = createReceiver({ secret, store: memoryStore({ now: clock.now }), clock, budgetMs: 1_000, logger: quiet, ...options });
  const answer = async (p: Promise<Response>) => {
    const r = await p;
    return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
  };
  return { clock, receiver, answer };
}

/** 20 copies of one event at once, its handler taking 300 ms of the clock: the answers, counted. */
async function twentyCopies(options: Partial<ReceiverOptions>) {
  const { clock, receiver, answer } = setup(options);
  let runs = 0;
  receiver.on('payment.success', async () => {
    runs += 1;
    await clock.sleep(300);
  });
  const body = JSON.stringify(createEvent('payment.success'));
  const { headers } = signedBody(body, { secret });
  const copies = Array.from({ length: 20 }, () => answer(receiver.handle(new Request('http://x/', { method: 'POST', headers, body }))));
  for (let t = 0; t < 400; t += 25) await clock.advance(25);
  const answers = await Promise.all(copies);
  const counted: Record<string, number> = {};
  for (const a of answers) counted[a] = (counted[a] ?? 0) + 1;
  return { counted, runs };
}

describe('a copy that finds its event running', () => {
  it('waits for it by default and answers 200 duplicate: 20 concurrent copies cause no 409, so no service retry', async () => {
    expect(await twentyCopies({})).toEqual({ counted: { '200 processed': 1, '200 duplicate': 19 }, runs: 1 });
  });

  it("with onInProgress: 'retry' answers 409 at once: 19 of 20 copies are retried by the service a minute later", async () => {
    expect(await twentyCopies({ onInProgress: 'retry' })).toEqual({ counted: { '200 processed': 1, '409 in-progress': 19 }, runs: 1 });
  });

  it("answers 409 when the running delivery outlives the copy's budget, and 503 never", async () => {
    const { clock, receiver, answer } = setup({ budgetMs: 200 });
    receiver.on('payment.success', () => clock.sleep(5_000));
    const event = createEvent('payment.success');
    const first = answer(receiver.handle(signedRequest(event, { secret })));
    await clock.advance(100);
    const copy = answer(receiver.handle(signedRequest(event, { secret })));
    for (let t = 0; t < 300; t += 25) await clock.advance(25);
    expect(await first).toBe('202 accepted');
    expect(await copy).toBe('409 in-progress');
  });

  it('runs the event itself when the running delivery failed and gave its claim up', async () => {
    const { clock, receiver, answer } = setup();
    let runs = 0;
    receiver.on('payment.success', async () => {
      runs += 1;
      await clock.sleep(100);
      if (runs === 1) throw new Error('the warehouse is down');
    });
    const event = createEvent('payment.success');
    const first = answer(receiver.handle(signedRequest(event, { secret })));
    const copy = answer(receiver.handle(signedRequest(event, { secret })));
    for (let t = 0; t < 400; t += 25) await clock.advance(25);
    expect([await first, await copy]).toEqual(['500 failed', '200 processed']);
    expect(runs).toBe(2);
  });

  it('is told when the event is done, not polling: 500 copies of a 5 s handler claim at most 3 times each and all answer duplicate', async () => {
    const clock = manualClock(0);
    const { store, calls } = spiedStore(clock);
    const receiver = createReceiver({ secret, store, clock, budgetMs: 8_000, logger: quiet });
    let runs = 0;
    receiver.on('payment.success', async () => {
      runs += 1;
      await clock.sleep(5_000);
    });
    const event = createEvent('payment.success');
    const answers = Array.from({ length: 501 }, () => receiver.handle(signedRequest(event, { secret })));
    for (let t = 0; t <= 5_100; t += 100) await clock.advance(100);
    const statuses = await Promise.all(
      answers.map(async (p) => `${(await p).status} ${((await (await p).json()) as { outcome: string }).outcome}`),
    );
    expect(statuses.filter((a) => a === '200 duplicate')).toHaveLength(500);
    expect(statuses.filter((a) => a === '200 processed')).toHaveLength(1);
    expect(runs).toBe(1);
    // The running delivery's claim, and three for each copy: the first, one once the watch is on, one when told.
    expect(calls.filter((c) => c.startsWith('claim@')).length).toBeLessThanOrEqual(1 + 3 * 500);
    // None of them was asked in the 5 s between: polling would ask at 25, 75, 175 ms and so on.
    expect(calls.filter((c) => c.startsWith('claim@') && c !== 'claim@0' && c !== 'claim@5000')).toEqual([]);
  });

  it('claims again when the running delivery gave its claim up: one copy runs the event, told at once', async () => {
    const clock = manualClock(0);
    const answer = async (p: Promise<Response>) => {
      const r = await p;
      return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
    };
    const { store, calls } = spiedStore(clock);
    const receiver = createReceiver({ secret, store, clock, budgetMs: 8_000, logger: quiet });
    let runs = 0;
    receiver.on('payment.success', async () => {
      runs += 1;
      await clock.sleep(1_000);
      if (runs === 1) throw new Error('the warehouse is down');
    });
    const event = createEvent('payment.success');
    const answers = Array.from({ length: 5 }, () => answer(receiver.handle(signedRequest(event, { secret }))));
    for (let t = 0; t <= 2_100; t += 100) await clock.advance(100);
    const counted: Record<string, number> = {};
    for (const a of await Promise.all(answers)) counted[a] = (counted[a] ?? 0) + 1;
    expect(counted).toEqual({ '500 failed': 1, '200 processed': 1, '200 duplicate': 3 });
    expect(runs).toBe(2);
    // Only at the start, at the release (1 s) and at the second run's end (2 s): never in between.
    expect(new Set(calls.filter((c) => c.startsWith('claim@')))).toEqual(new Set(['claim@0', 'claim@1000', 'claim@2000']));
  });

  it('refuses an onInProgress it does not know, naming both', () => {
    expect(() => createReceiver({ secret, onInProgress: 'later' as never })).toThrow(
      /^\[@payhook\/core\] onInProgress must be 'wait' or 'retry'/,
    );
  });
});
