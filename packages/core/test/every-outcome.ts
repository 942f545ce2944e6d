import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, NonRetriableError, type DeliveryOutcome, type LoggerOption, type Store } from '../src/index.js';

export const secret = 'whsec_every_outcome';
const url = 'http://127.0.0.1/webhooks';

/** A store that cannot be reached: every call throws, as a client whose server is down does. */
const downStore: Store = {
  claim: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379')),
  complete: () => Promise.reject(new Error('down')),
  release: () => Promise.reject(new Error('down')),
  extend: () => Promise.reject(new Error('down')),
  get: () => Promise.resolve(undefined),
};

export interface Answer {
  /** The outcome the case was made to show. */
  expected: DeliveryOutcome;
  status: number;
  body: string;
}

/** The late outcomes `everyOutcome` also reports: the handlers of its 202 and its 503 finishing. */
export const LATE_OUTCOMES: readonly DeliveryOutcome[] = ['processed', 'processed'];

/**
 * Every row of the README's status table, once, through receivers that share `logger`: each
 * delivery's answer, in order. The handlers of the 202 and of the 503 (`afterBudget: 'retry'`)
 * finish before it returns, so their late outcomes are reported too. Time is a manual clock.
 */
export async function everyOutcome(logger: LoggerOption): Promise<Answer[]> {
  const clock = manualClock(0);
  // A copy of a running event answers 409 at once here (`retry`): the table's 409 without a wait on the clock.
  const options = { secret, logger, clock, budgetMs: 200, maxBodyBytes: 4_096, bodyTimeoutMs: 1_000, onInProgress: 'retry' as const };
  const make = (extra: object = {}) =>
    createReceiver({ ...options, store: memoryStore({ now: clock.now }), ...extra }).on('payment.success', async (event) => {
      const kind = event.merchantReference;
      if (kind === 'fail') throw new Error('the warehouse is unreachable');
      if (kind === 'reject') throw new NonRetriableError('no order with this reference');
      if (kind === 'slow') await clock.sleep(500);
    });
  const receiver = make();
  const answers: Answer[] = [];
  const answer = async (expected: DeliveryOutcome, pending: Promise<Response>, advance = 0) => {
    if (advance > 0) await clock.advance(advance);
    const res = await pending;
    answers.push({ expected, status: res.status, body: await res.text() });
  };
  const event = (merchantReference = 'ok') => createEvent('payment.success', { merchantReference });

  await answer('method-not-allowed', receiver.handle(new Request(url, { method: 'GET' })));
  await answer('too-large', receiver.handle(signedRequest({ ...event(), note: 'x'.repeat(5_000) }, { secret })));
  const endless = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new Uint8Array([0x7b])) });
  await answer('too-slow', receiver.handle(new Request(url, { method: 'POST', body: endless, duplex: 'half' } as RequestInit)), 1_000);
  const read = new Request(url, { method: 'POST', body: '{}' });
  await read.text();
  await answer('body-unavailable', receiver.handle(read));
  await answer('unauthorized', receiver.handle(signedRequest(event(), { secret: 'whsec_someone_else' })));
  await answer('malformed', receiver.handle(signedRequest('{"event": "payment.success",', { secret })));
  await answer('invalid', receiver.handle(signedRequest({ ...event(), amount: 1500 }, { secret })));
  await answer('ignored', receiver.handle(signedRequest({ ...event(), event: 'payment.someday' }, { secret })));
  await answer('store-unavailable', make({ store: downStore }).handle(signedRequest(event(), { secret })));
  const once = event();
  await answer('processed', receiver.handle(signedRequest(once, { secret })));
  await answer('duplicate', receiver.handle(signedRequest(once, { secret })));
  await answer('failed', receiver.handle(signedRequest(event('fail'), { secret })));
  await answer('rejected', receiver.handle(signedRequest(event('reject'), { secret })));

  const slow = event('slow');
  const accepted = receiver.handle(signedRequest(slow, { secret }));
  await answer('accepted', accepted, 200);
  await answer('in-progress', receiver.handle(signedRequest(slow, { secret })));
  await clock.advance(300); // the 202's handler ends: a late outcome

  const deferred = make({ afterBudget: 'retry' }).handle(signedRequest(event('slow'), { secret }));
  await answer('deferred', deferred, 200);
  await clock.advance(300); // and the 503's

  // The ordering guard: a refund before its payment ran.
  const guarded = make({ ordering: 'hold' }).on('payment.refunded', () => {});
  await answer('held', guarded.handle(signedRequest(createEvent('payment.refunded'), { secret })));
  return answers;
}
