import { describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, type PaymentEvent, type ReceiverOptions, type RecordClient } from '../../src/index.js';
import { recordOf } from '../fixtures/service-record.js';

/**
 * The record check (steps/record-check.ts) for handlers registered with `{ verify: true }`: which
 * of the service's endpoints it asks, and what each refusal of the service answers. The client is
 * made here: `verify` answers 400 for a transaction that is not completed, as the service does.
 */
const secret = 'whsec_record_check';
const clock = manualClock(1_700_000_000_000);

const failure = (status: number) => Object.assign(new Error(`the service answered ${status}`), { status });

/** A service whose record is `status.now`, or whose retrieve fails with `status.retrieveFails`; `asked` lists each call. */
function service(event: PaymentEvent, state: { now: string; retrieveFails?: number; verifyFails?: number }) {
  const asked: string[] = [];
  const client: RecordClient = {
    transactions: {
      verify: async () => {
        asked.push('verify');
        if (state.verifyFails !== undefined) throw failure(state.verifyFails);
        if (state.now !== 'completed') throw failure(400);
        return recordOf(event, state.now);
      },
      retrieve: async () => {
        asked.push('retrieve');
        if (state.retrieveFails !== undefined) throw failure(state.retrieveFails);
        return recordOf(event, state.now);
      },
    },
  };
  return { client, asked };
}

function checked(options: Partial<ReceiverOptions>) {
  const errors: unknown[] = [];
  const seen: (string | undefined)[] = [];
  const receiver = createReceiver({
    secret,
    clock,
    store: memoryStore({ clock, warn: false }),
    logger: (_level, fields) => void ('outcome' in fields && errors.push((fields as { err?: unknown }).err)),
    ...options,
  });
  for (const name of ['payment.success', 'payment.refunding'] as const)
    receiver.on(name, (_e, ctx) => void seen.push(ctx.record?.status), { verify: true });
  const send = async (event: PaymentEvent, url = 'http://x/') => {
    const request = signedRequest(event, { secret });
    const r = await receiver.handle(new Request(url, { method: 'POST', body: await request.text(), headers: request.headers }));
    return `${r.status} ${((await r.json()) as { outcome: string }).outcome}`;
  };
  return { send, seen, error: () => String(errors.at(-1)) };
}

describe('the record check asks the service once, and reads its refusals', () => {
  it('asks verify for a success, and retrieve when verify answers 400 (refunded since): that record agrees', async () => {
    const paid = createEvent('payment.success');
    const { client, asked } = service(paid, { now: 'completed' });
    const { send, seen } = checked({ client });
    expect(await send(paid)).toBe('200 processed');
    expect(asked).toEqual(['verify']);
    const refunded = createEvent('payment.success');
    const since = service(refunded, { now: 'refunded' });
    expect(await checked({ client: since.client }).send(refunded)).toBe('200 processed');
    expect(since.asked).toEqual(['verify', 'retrieve']);
    expect(seen).toEqual(['completed']);
  });

  it('asks only retrieve for any other event', async () => {
    const refunding = createEvent('payment.refunding');
    const { client, asked } = service(refunding, { now: 'refunding' });
    const { send, seen } = checked({ client });
    expect(await send(refunding)).toBe('200 processed');
    expect([asked, seen]).toEqual([['retrieve'], ['refunding']]);
  });

  it.each([
    [404, '200 mismatch'],
    [400, '200 mismatch'],
    [500, '503 verify-unavailable'],
    [429, '503 verify-unavailable'],
  ])('a retrieve the service answers %i: %s, and no handler runs', async (status, answer) => {
    const refunding = createEvent('payment.refunding');
    const { send, seen, error } = checked({ client: service(refunding, { now: 'refunding', retrieveFails: status }).client });
    expect(await send(refunding)).toBe(answer);
    expect(error()).toContain(`the service answered ${status}`);
    expect(seen).toEqual([]);
  });

  it('a verify the service answers other than 400 is not read again with retrieve: 503, so the service comes back', async () => {
    const paid = createEvent('payment.success');
    const { client, asked } = service(paid, { now: 'completed', verifyFails: 503 });
    const { send, seen } = checked({ client });
    expect(await send(paid)).toBe('503 verify-unavailable');
    expect([asked, seen]).toEqual([['verify'], []]);
  });

  it.each([undefined, null, 'a string'])(
    'a client of your own that rejects with %s: 503 verify-unavailable, the claim given back, and no handler runs',
    async (thrown) => {
      const refunding = createEvent('payment.refunding');
      const rejecting = async () => {
        throw thrown;
      };
      const client: RecordClient = { transactions: { verify: rejecting, retrieve: rejecting } };
      const { send, seen } = checked({ client });
      expect(await send(refunding)).toBe('503 verify-unavailable');
      // Given back, not held for its lease: the service's next attempt runs it once the client answers.
      expect(await send(refunding)).toBe('503 verify-unavailable');
      expect(seen).toEqual([]);
    },
  );

  it("names what to return from accounts.resolve when an account's settings give no client: 503, nothing runs", async () => {
    const { send, seen, error } = checked({ secret: undefined, accounts: { resolve: () => ({ secret }) } });
    expect(await send(createEvent('payment.refunding'), 'https://platform.example/webhooks/epay/acct_7Q2')).toBe('503 verify-unavailable');
    expect(error()).toMatch(
      /asked for the service's record \(\{ verify: true \}\), but neither account acct_7Q2's settings from accounts.resolve nor the receiver have a client: return \{ secret, client: createClient\(\{ apiKey \}\) \} for it/,
    );
    expect(seen).toEqual([]);
  });
});
