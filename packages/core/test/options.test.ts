import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedBody, signedRequest } from '@payhook/testing';
import { adapterOf } from '../src/adapter.js';
import { createReceiver, type DeliveryReport, type ReceiverOptions, type RecordClient, type TransactionRecord } from '../src/index.js';
import { createJobRunner, type Handoff } from '../src/queue.js';
import { signatureHeaderName } from '../src/api.js';

/*
 * What createReceiver promises about its options (issue 38, options.ts): every value it cannot
 * honour is refused when the receiver is made, with the error class and a message that starts
 * with the package and names the option; the values just inside are taken; and the ones that
 * change behaviour (verifyBeforeHandling, the default store, the signature header) really do.
 * The refusals receiver.test.ts already makes (budgetMs 0 and 10000, secret '' and [], ...) are not repeated.
 */
const secret = 'whsec_options';
const quiet = { info() {}, warn() {}, error() {} };
const make = (options: Partial<ReceiverOptions>) => createReceiver({ secret, logger: quiet, ...options } as ReceiverOptions);

/** A client whose record check is observable: each call it gets, and a record of `status` for any reference. */
function countingClient(status = 'completed') {
  const calls: string[] = [];
  const record = (reference: string) => ({ reference, status }) as unknown as TransactionRecord;
  const client: RecordClient = {
    transactions: {
      verify: async (reference) => (calls.push(`verify ${reference}`), record(reference)),
      retrieve: async (reference) => (calls.push(`retrieve ${reference}`), record(reference)),
    },
  };
  return { client, calls };
}
const { client } = countingClient();
const queue: Handoff = { enqueue: async () => {} };

/** What `make` threw, or undefined. */
function thrown(options: Partial<ReceiverOptions>): unknown {
  try {
    make(options);
  } catch (error) {
    return error;
  }
  return undefined;
}

const outcomeOf = async (response: Promise<Response>) => ((await (await response).json()) as { outcome: string }).outcome;

describe('createReceiver refuses an option it cannot honour, with the error class and a message naming the option', () => {
  const positiveLease = /^\[@payhook\/core\] leaseMs must be a positive number of milliseconds/;
  const headerName = /^\[@payhook\/core\] signatureHeader must be an HTTP header name/;
  const secretList = /^\[@payhook\/core\] `secret` must be the webhook secret/;
  it.each([
    ['leaseMs 0', { leaseMs: 0 }, RangeError, positiveLease],
    ['leaseMs -1', { leaseMs: -1 }, RangeError, positiveLease],
    ['leaseMs Infinity', { leaseMs: Infinity }, RangeError, positiveLease],
    ['leaseMs NaN', { leaseMs: Number.NaN }, RangeError, positiveLease],
    [
      'leaseMs equal to budgetMs',
      { leaseMs: 8_000 },
      RangeError,
      /^\[@payhook\/core\] leaseMs \(8000\) must be longer than budgetMs \(8000\)/,
    ],
    ['maxBodyBytes 0', { maxBodyBytes: 0 }, RangeError, /^\[@payhook\/core\] maxBodyBytes must be a positive whole number/],
    ['maxBodyBytes 1.5', { maxBodyBytes: 1.5 }, RangeError, /^\[@payhook\/core\] maxBodyBytes must be a positive whole number/],
    ['a secret list with an empty one', { secret: ['ok', ''] }, TypeError, secretList],
    ['a secret list with a number', { secret: ['ok', 5] as never }, TypeError, secretList],
    ['afterBudget later', { afterBudget: 'later' as never }, TypeError, /^\[@payhook\/core\] afterBudget must be 'accept' or 'retry'/],
    ['onInProgress later', { onInProgress: 'later' as never }, TypeError, /^\[@payhook\/core\] onInProgress must be 'wait' or 'retry'/],
    ['ordering sideways', { ordering: 'sideways' as never }, TypeError, /^\[@payhook\/core\] ordering must be 'hold' or 'fetch'/],
    [
      "ordering 'fetch' without a client",
      { ordering: 'fetch' },
      TypeError,
      /^\[@payhook\/core\] ordering: 'fetch' asks the service for the record/,
    ],
    ['mode production', { mode: 'production' as never }, TypeError, /^\[@payhook\/core\] mode must be 'live' or 'sandbox'/],
    ['signatureHeader with a space', { signatureHeader: 'X Epay-Signature' }, TypeError, headerName],
    ['signatureHeader with a colon inside', { signatureHeader: 'X-Epay:Signature' }, TypeError, headerName],
    ['signatureHeader ending in a colon', { signatureHeader: 'X-Epay-Signature:' }, TypeError, headerName],
    ['signatureHeader empty', { signatureHeader: '' }, TypeError, headerName],
    ['signatureHeader a number', { signatureHeader: 5 as never }, TypeError, headerName],
    ['a handoff without enqueue', { handoff: {} as Handoff }, TypeError, /^\[@payhook\/core\] handoff must be a queue/],
    [
      'a handoff with verifyBeforeHandling',
      { handoff: queue, client, verifyBeforeHandling: true },
      TypeError,
      /^\[@payhook\/core\] verifyBeforeHandling runs where the handlers run/,
    ],
    [
      'verifyBeforeHandling without a client',
      { verifyBeforeHandling: true },
      TypeError,
      /^\[@payhook\/core\] a handler asked for \{ verify: true \}, but the receiver has no client/,
    ],
  ] as [string, Partial<ReceiverOptions>, ErrorConstructor, RegExp][])('%s', (_, options, kind, message) => {
    const error = thrown(options);
    expect(error).toBeInstanceOf(kind);
    expect((error as Error).message).toMatch(message);
  });
});

describe('createReceiver takes every value just inside the bounds, and every named choice', () => {
  it.each([
    ['no options but the secret', {}],
    ['leaseMs just above the default budget', { leaseMs: 8_001 }],
    ['leaseMs just above a budget of its own', { budgetMs: 1_000, leaseMs: 1_001 }],
    ['budgetMs 9999', { budgetMs: 9_999 }],
    ['maxBodyBytes 1', { maxBodyBytes: 1 }],
    ['a list of secrets', { secret: ['old', 'new'] }],
    ["afterBudget 'accept'", { afterBudget: 'accept' }],
    ["afterBudget 'retry'", { afterBudget: 'retry' }],
    ["onInProgress 'wait'", { onInProgress: 'wait' }],
    ["onInProgress 'retry'", { onInProgress: 'retry' }],
    ["ordering 'hold'", { ordering: 'hold' }],
    ["ordering 'fetch' with a client", { ordering: 'fetch', client }],
    ["mode 'live'", { mode: 'live' }],
    ["mode 'sandbox'", { mode: 'sandbox' }],
    ['a handoff queue', { handoff: queue }],
    ['verifyBeforeHandling with a client', { verifyBeforeHandling: true, client }],
    ['signatureHeader X-Epay-Signature', { signatureHeader: 'X-Epay-Signature' }],
  ] as [string, Partial<ReceiverOptions>][])('%s', (_, options) => {
    expect(thrown(options)).toBeUndefined();
  });

  it('a queue worker refuses a lease that is not a positive finite number too, having no budget to compare it with', () => {
    for (const leaseMs of [0, -1, Infinity]) {
      expect(() => createJobRunner({ leaseMs, logger: quiet })).toThrow(RangeError);
      expect(() => createJobRunner({ leaseMs, logger: quiet })).toThrow(/^\[@payhook\/core\] leaseMs must be a positive number/);
    }
    expect(() => createJobRunner({ leaseMs: 1, logger: quiet })).not.toThrow();
  });
});

describe('the signature header', () => {
  it('resolves to the lower-case name adapters read, X-Service-Signature when unset', () => {
    expect(signatureHeaderName('X-Epay-Signature')).toBe('x-epay-signature');
    expect(signatureHeaderName(undefined)).toBe('x-service-signature');
    expect(adapterOf(make({ signatureHeader: 'X-Epay-Signature' })).signatureHeader).toBe('x-epay-signature');
    expect(adapterOf(make({})).signatureHeader).toBe('x-service-signature');
    expect(adapterOf(make({ maxBodyBytes: 1 })).maxBodyBytes).toBe(1);
  });

  it('is where an ePay-configured receiver reads the signature', async () => {
    const receiver = make({ signatureHeader: 'X-Epay-Signature' }).on('payment.success', () => {});
    const event = createEvent('payment.success');
    expect(await outcomeOf(receiver.handle(signedRequest(event, { secret, signatureHeader: 'X-Epay-Signature' })))).toBe('processed');
  });

  it.each([
    ['the default receiver, sent only X-Epay-Signature', undefined, 'x-epay-signature', 'x-epay-signature'],
    ['an ePay receiver, sent only X-Service-Signature', 'X-Epay-Signature', 'x-service-signature', 'x-service-signature'],
    ['the default receiver, sent no signature header', undefined, undefined, undefined],
    ['an ePay receiver, sent no signature header', 'X-Epay-Signature', undefined, undefined],
  ])('when it is missing, the 401 logs the other known header only if one came: %s', async (_, configured, sent, seen) => {
    const reports: DeliveryReport[] = [];
    const messages: string[] = [];
    const receiver = createReceiver({
      secret,
      signatureHeader: configured,
      logger: (_level, fields, message) => void ('outcome' in fields && (reports.push(fields as DeliveryReport), messages.push(message))),
    });
    const { body, signature } = signedBody(createEvent('payment.success'), { secret });
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(sent && { [sent]: signature }) };
    const response = await receiver.handle(new Request('http://127.0.0.1/webhooks', { method: 'POST', headers, body }));
    expect(response.status).toBe(401);
    expect(reports).toHaveLength(1);
    expect(reports[0]!.signatureHeaderSeen).toBe(seen);
    // The fix named: the receiver's header for a default receiver; the sender for an ePay receiver, which is right.
    if (seen === 'x-epay-signature') expect(messages[0]).toMatch(/set the receiver's signatureHeader to 'x-epay-signature'/);
    if (seen === 'x-service-signature')
      expect(messages[0]).toMatch(
        /keep the receiver as it is and fix the sender: start the reference service with --signature-header X-Epay-Signature/,
      );
  });
});

describe('options that change what a delivery does', () => {
  it('verifyBeforeHandling: true asks the client for the record before a handler registered without { verify: true }', async () => {
    const { client, calls } = countingClient('completed');
    const records: unknown[] = [];
    const receiver = make({ client, verifyBeforeHandling: true }).on('payment.success', (_event, ctx) => void records.push(ctx.record));
    const event = createEvent('payment.success');
    expect(await outcomeOf(receiver.handle(signedRequest(event, { secret })))).toBe('processed');
    expect(calls).toEqual([`verify ${event.reference}`]);
    expect(records).toEqual([{ reference: event.reference, status: 'completed' }]);
  });

  it('verifyBeforeHandling: true runs no handler when the record disagrees; left unset, the client is not asked', async () => {
    const failed = countingClient('failed');
    let runs = 0;
    const event = createEvent('payment.success');
    const checked = make({ client: failed.client, verifyBeforeHandling: true }).on('payment.success', () => void runs++);
    expect(await outcomeOf(checked.handle(signedRequest(event, { secret })))).toBe('mismatch');
    expect(runs).toBe(0);
    const unchecked = countingClient('pending');
    const plain = make({ client: unchecked.client }).on('payment.success', () => void runs++);
    expect(await outcomeOf(plain.handle(signedRequest(event, { secret })))).toBe('processed');
    expect([runs, unchecked.calls]).toEqual([1, []]);
  });

  it('a handler that asks for { verify: true } needs a client: refused without one, taken with one', () => {
    const refusal = /^\[@payhook\/core\] a handler asked for \{ verify: true \}, but the receiver has no client/;
    expect(() => make({}).on('payment.success', () => {}, { verify: true })).toThrow(TypeError);
    expect(() => make({}).on('payment.success', () => {}, { verify: true })).toThrow(refusal);
    expect(() => make({}).onAny(() => {}, { verify: true })).toThrow(refusal);
    expect(() => make({ client }).on('payment.success', () => {}, { verify: true })).not.toThrow();
    expect(() => make({}).on('payment.success', () => {}, { verify: false })).not.toThrow();
    expect(() => make({}).on('payment.success', () => {})).not.toThrow();
  });

  it('the default store is a memory store on the receiver clock: a done record lasts retentionMs of that clock', async () => {
    const clock = manualClock(0);
    let runs = 0;
    const receiver = make({ clock, retentionMs: 1_000 }).on('payment.success', () => void runs++);
    const event = createEvent('payment.success');
    const deliver = () => outcomeOf(receiver.handle(signedRequest(event, { secret })));
    expect(await deliver()).toBe('processed');
    await clock.advance(999);
    expect(await deliver()).toBe('duplicate');
    await clock.advance(1);
    expect(await deliver()).toBe('processed');
    expect(runs).toBe(2);
  });

  it('a handoff is used: the event goes to its queue and the answer is 200 queued', async () => {
    const queued: string[] = [];
    const receiver = make({ handoff: { enqueue: async (job) => void queued.push(job.event.reference) } });
    const event = createEvent('payment.success');
    const response = await receiver.handle(signedRequest(event, { secret }));
    expect([response.status, ((await response.json()) as { outcome: string }).outcome]).toEqual([200, 'queued']);
    expect(queued).toEqual([event.reference]);
  });
});
