import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent, manualClock, signedBody } from '@payhook/testing';
import {
  createReceiver,
  memoryStore,
  type AccountSettings,
  type AccountsOptions,
  type DeliveryReport,
  type ReceiverOptions,
  type TransactionRecord,
} from '../src/index.js';
import { toNodeListener } from '../src/node-bridge/node-bridge.js';
import type { RecordClient } from '../src/contracts/handling.js';

/**
 * Many merchant accounts on one endpoint (issue 50): the account from the path or a header, its
 * secrets from a cached resolver, and nothing of one account reaching another's.
 */
const SECRETS: Record<string, string[]> = { acct_A: ['whsec_a'], acct_B: ['whsec_b'], acct_C: ['whsec_c_new', 'whsec_c_old'] };

function platform(
  options: Omit<Partial<ReceiverOptions>, 'accounts'> & { accounts?: Partial<AccountsOptions>; table?: Record<string, string[]> } = {},
) {
  const table = options.table ?? { ...SECRETS };
  const asked: string[] = [];
  const lines: { level: string; fields: DeliveryReport; message: string }[] = [];
  const runs: { account: string | undefined; reference: string; dedupeKey: string }[] = [];
  const clock = manualClock();
  const receiver = createReceiver({
    clock,
    store: memoryStore({ now: () => clock.now(), ledger: true }),
    logger: (level, fields, message) => void lines.push({ level, fields: fields as DeliveryReport, message }),
    ...options,
    accounts: {
      ...options.accounts,
      resolve: (name) => {
        asked.push(name);
        const own = options.accounts?.resolve;
        return own ? own(name) : table[name] && ({ secret: table[name] } satisfies AccountSettings);
      },
    },
  });
  receiver.onAny((event, ctx) => void runs.push({ account: ctx.account, reference: event.reference, dedupeKey: ctx.dedupeKey }));
  const post = (path: string, body: string, secret: string, headers: Record<string, string> = {}) =>
    receiver.handle(
      new Request(`https://platform.example${path}`, {
        method: 'POST',
        body,
        headers: { ...signedBody(body, { secret }).headers, ...headers },
      }),
    );
  const answer = async (res: Response) => [res.status, await res.text(), res.headers.get('content-type')] as const;
  return { receiver, asked, lines, runs, clock, table, post, answer };
}

const bodyOf = (reference = `ref_${Math.random().toString(36).slice(2)}`) => JSON.stringify(createEvent('payment.success', { reference }));

describe('an account per request, secrets per account', () => {
  it('names the account from the last segment of the path; its handler, report and key carry it', async () => {
    const p = platform();
    const body = bodyOf();
    const res = await p.post('/webhooks/epay/acct_A?attempt=1', body, 'whsec_a');
    expect(await p.answer(res)).toEqual([200, '{"outcome":"processed"}', 'application/json']);
    expect(p.runs).toEqual([
      { account: 'acct_A', reference: JSON.parse(body).reference, dedupeKey: expect.stringMatching(/^@acct_A:sandbox:/) },
    ]);
    expect(p.lines.at(-1)!.fields).toMatchObject({ outcome: 'processed', account: 'acct_A' });
    await p.receiver.idle();
    expect(await p.receiver.store.ledger!.list({ account: 'acct_A' })).toMatchObject([{ account: 'acct_A', outcome: 'processed' }]);
    expect(await p.receiver.store.ledger!.list({ account: 'acct_B' })).toEqual([]);
  });

  it('reads the account from a header the platform sets, when told to', async () => {
    const p = platform({ accounts: { from: { header: 'X-Platform-Account' } } });
    // The path names B; the header, which this receiver reads, names A.
    const res = await p.post('/webhooks/acct_B', bodyOf(), 'whsec_a', { 'x-platform-account': 'acct_A' });
    expect(res.status).toBe(200);
    expect(p.runs.map((r) => r.account)).toEqual(['acct_A']);
    expect(p.asked).toEqual(['acct_A']);
  });

  it('verifies with every secret of an account in rotation, and says which matched', async () => {
    const p = platform();
    for (const secret of ['whsec_c_new', 'whsec_c_old']) expect((await p.post('/hooks/acct_C', bodyOf(), secret)).status).toBe(200);
    expect(p.lines.filter((l) => l.fields.outcome === 'processed').map((l) => l.fields.secretIndex)).toEqual([0, 1]);
  });

  it('looks an account up once however many deliveries arrive at once, then answers from the cache until its time to live', async () => {
    const p = platform({ accounts: { cache: { ttlMs: 60_000 } } });
    const answers = await Promise.all(Array.from({ length: 50 }, () => p.post('/w/acct_A', bodyOf(), 'whsec_a')));
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(p.asked).toEqual(['acct_A']);
    // A rotation in the table reaches the receiver once the cached settings are past their time.
    p.table.acct_A = ['whsec_a2'];
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a2')).status).toBe(401);
    await p.clock.advance(60_001);
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a2')).status).toBe(200);
    expect(p.asked).toEqual(['acct_A', 'acct_A']);
  });

  it('asks again at once about an account the app says to forget (a secret added for a rotation)', async () => {
    const p = platform();
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(200);
    p.table.acct_A = ['whsec_a_rolled', 'whsec_a'];
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a_rolled')).status).toBe(401);
    p.receiver.forgetAccount('acct_A');
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a_rolled')).status).toBe(200);
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(200);
    expect(p.asked).toEqual(['acct_A', 'acct_A']);
    expect(() => createReceiver({ secret: 's' }).forgetAccount('acct_A')).toThrow(/forgetAccount is for a receiver with `accounts`/);
  });

  it('runs a resolver that answers synchronously, and one that answers with a promise', async () => {
    const p = platform({ accounts: { resolve: async (name) => (name === 'acct_A' ? { secret: 'whsec_a' } : undefined) } });
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(200);
    expect((await p.post('/w/acct_B', bodyOf(), 'whsec_b')).status).toBe(401);
  });
});

describe('an unknown account looks exactly like a bad signature', () => {
  it('same status, body and headers as a known account with a wrong signature; the log says which', async () => {
    const p = platform();
    const body = bodyOf();
    const badSignature = await p.answer(await p.post('/w/acct_A', body, 'whsec_wrong'));
    const unknown = await p.answer(await p.post('/w/acct_Z', body, 'whsec_wrong'));
    const unknownSignedWithA = await p.answer(await p.post('/w/acct_Z', body, 'whsec_a'));
    expect(badSignature).toEqual([401, '{"outcome":"unauthorized"}', 'application/json']);
    expect(unknown).toEqual(badSignature);
    expect(unknownSignedWithA).toEqual(badSignature);
    const refusals = p.lines.filter((l) => l.fields.outcome === 'unauthorized');
    expect(refusals.map((l) => [l.fields.reason, l.fields.account, l.fields.accountNamed])).toEqual([
      ['mismatch', 'acct_A', undefined],
      ['unknown-account', undefined, 'acct_Z'],
      ['unknown-account', undefined, 'acct_Z'],
    ]);
    expect(refusals[1]!.message).toMatch(/accounts\.resolve knows no account acct_Z/);
    expect(p.runs).toEqual([]);
  });
});

describe('nothing crosses between accounts', () => {
  it("refuses a delivery signed with A's secret and posted to B's URL, and runs nothing", async () => {
    const p = platform();
    const body = bodyOf();
    expect((await p.post('/webhooks/epay/acct_B', body, 'whsec_a')).status).toBe(401);
    expect(p.runs).toEqual([]);
    // The same bytes at A's URL are A's, once.
    expect((await p.post('/webhooks/epay/acct_A', body, 'whsec_a')).status).toBe(200);
    expect((await p.post('/webhooks/epay/acct_A', body, 'whsec_a')).status).toBe(200);
    expect(p.runs.map((r) => r.account)).toEqual(['acct_A']);
  });

  it("keeps two accounts' events apart when their references are equal: each runs once", async () => {
    const p = platform();
    const body = bodyOf('ref_same_in_both');
    for (const [acct, secret] of [
      ['acct_A', 'whsec_a'],
      ['acct_B', 'whsec_b'],
      ['acct_A', 'whsec_a'],
      ['acct_B', 'whsec_b'],
    ] as const) {
      await p.post(`/w/${acct}`, body, secret);
    }
    expect(p.runs.map((r) => [r.account, r.reference])).toEqual([
      ['acct_A', 'ref_same_in_both'],
      ['acct_B', 'ref_same_in_both'],
    ]);
    expect(p.lines.filter((l) => l.fields.outcome === 'duplicate').map((l) => l.fields.account)).toEqual(['acct_A', 'acct_B']);
  });

  it("replays a record as its own account's: verified with that account's secrets, claimed under its keys", async () => {
    const p = platform();
    await p.post('/w/acct_B', bodyOf(), 'whsec_b');
    await p.receiver.idle();
    const [entry] = await p.receiver.store.ledger!.list({ account: 'acct_B' });
    expect((await p.receiver.replay(entry!.id)).outcome).toBe('duplicate');
    const forced = await p.receiver.replay(entry!.id, { force: true });
    expect([forced.outcome, forced.account]).toEqual(['processed', 'acct_B']);
    expect(p.runs.map((r) => r.account)).toEqual(['acct_B', 'acct_B']);
  });

  it('dispatches a recovered event as the account it names, and refuses a dispatch that names none', async () => {
    const p = platform();
    const event = createEvent('payment.success');
    const report = await p.receiver.dispatch(event, { account: 'acct_A' });
    expect([report.outcome, report.account, report.dedupeKey]).toEqual([
      'processed',
      'acct_A',
      `@acct_A:${event.mode}:${event.reference}:payment.success`,
    ]);
    // The webhook for the same event, when it comes, is a duplicate of the recovered one.
    expect(await p.answer(await p.post('/w/acct_A', JSON.stringify(event), 'whsec_a'))).toEqual([
      200,
      '{"outcome":"duplicate"}',
      'application/json',
    ]);
    await expect(p.receiver.dispatch(event)).rejects.toThrow(/dispatch\(event, \{ account \}\) needs the account's name/);
    await expect(p.receiver.dispatch(event, { account: '../acct_A' })).rejects.toThrow(/needs the account's name/);
  });
});

describe("an account's own client", () => {
  /** A client of the interface that answers every record as completed, and says whose key asked. */
  const clientOf = (name: string, asked: string[]): RecordClient => {
    const record = async (reference: string) =>
      (asked.push(name), { reference, status: 'completed', mode: 'sandbox' }) as unknown as TransactionRecord;
    return { transactions: { verify: record, retrieve: record } };
  };

  it("fetches the record for { verify: true } with the account's client, never another account's", async () => {
    const asked: string[] = [];
    const p = platform({
      accounts: { resolve: (name) => ({ secret: name === 'acct_A' ? 'whsec_a' : 'whsec_b', client: clientOf(name, asked) }) },
    });
    p.receiver.on('payment.success', () => {}, { verify: true });
    expect((await p.post('/w/acct_B', bodyOf(), 'whsec_b')).status).toBe(200);
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(200);
    expect(asked).toEqual(['acct_B', 'acct_A']);
  });

  it('answers 503 verify-unavailable, and runs nothing, when neither the account nor the receiver has a client', async () => {
    const p = platform();
    let ran = 0;
    p.receiver.on('payment.success', () => void (ran += 1), { verify: true });
    expect(await p.answer(await p.post('/w/acct_A', bodyOf(), 'whsec_a'))).toEqual([
      503,
      '{"outcome":"verify-unavailable"}',
      'application/json',
    ]);
    expect(String((p.lines.at(-1)!.fields as { err?: Error }).err?.message)).toMatch(
      /neither account acct_A's settings from accounts\.resolve nor the receiver have a client/,
    );
    expect(ran).toBe(0);
  });
});

describe('the ordering guard with accounts', () => {
  it("holds an account's refund until that account's own payment ran: another account's done payment of the same reference does not count", async () => {
    const p = platform({ ordering: 'hold' });
    const success = JSON.stringify(createEvent('payment.success', { reference: 'ref_shared' }));
    const refunding = JSON.stringify(createEvent('payment.refunding', { reference: 'ref_shared' }));
    expect((await p.post('/w/acct_B', success, 'whsec_b')).status).toBe(200);
    expect(await p.answer(await p.post('/w/acct_A', refunding, 'whsec_a'))).toEqual([409, '{"outcome":"held"}', 'application/json']);
    expect(p.lines.find((l) => l.fields.outcome === 'held')!.fields).toMatchObject({ account: 'acct_A', waitingFor: ['payment.success'] });
    expect((await p.post('/w/acct_A', success, 'whsec_a')).status).toBe(200);
    expect((await p.post('/w/acct_A', refunding, 'whsec_a')).status).toBe(200);
    expect(p.runs.map((r) => [r.account, r.reference])).toEqual([
      ['acct_B', 'ref_shared'],
      ['acct_A', 'ref_shared'],
      ['acct_A', 'ref_shared'],
    ]);
  });

  it("with 'fetch', answers 503 verify-unavailable naming the fix when the account has no client and the receiver none", async () => {
    const p = platform({ ordering: 'fetch' });
    const refunding = JSON.stringify(createEvent('payment.refunding', { paidAt: null }));
    expect((await p.post('/w/acct_A', refunding, 'whsec_a')).status).toBe(503);
    expect(String((p.lines.at(-1)!.fields as { err?: Error }).err?.message)).toMatch(
      /ordering: 'fetch' asks the service for the record, but neither account acct_A's settings/,
    );
    expect(p.runs).toEqual([]);
  });
});

describe('hostile input under a well-formed signature header', () => {
  it.each([
    ['dot segments', '/webhooks/..'],
    ['an encoded slash', '/webhooks/acct_A%2F..%2Facct_B'],
    ['an encoded account name', '/webhooks/%61cct_A'],
    ['a 10 KB name', `/webhooks/${'a'.repeat(10_240)}`],
    ['a Cyrillic look-alike', '/webhooks/\u0430cct_A'],
    ['a full-width look-alike', '/webhooks/\uff41cct_A'],
    ['no name at all', '/webhooks/'],
    ['a name with a dot', '/webhooks/acct_A.json'],
  ])('%s: the bare 401, and the resolver is never asked', async (_, path) => {
    const p = platform();
    const res = await p.post(path, bodyOf(), 'whsec_a');
    expect(await p.answer(res)).toEqual([401, '{"outcome":"unauthorized"}', 'application/json']);
    expect(p.asked).toEqual([]);
    expect(p.runs).toEqual([]);
    const line = p.lines.find((l) => l.fields.outcome === 'unauthorized')!;
    expect([line.fields.reason, line.fields.accountNamed]).toEqual(['unknown-account', undefined]);
  });

  it('a flood of 10,000 made-up names asks the resolver at most lookupsPerMinute times, and evicts no known account', async () => {
    const p = platform({ accounts: { lookupsPerMinute: 100, cache: { max: 50, ttlMs: 3_600_000 } } });
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(200);
    const statuses = new Map<number, number>();
    for (let i = 0; i < 10_000; i++) {
      const res = await p.post(`/w/stranger_${i}`, bodyOf(), 'whsec_a');
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    // One lookup for acct_A, then the minute's share for strangers; the rest answered without the resolver.
    expect(p.asked.length).toBe(100);
    expect(statuses).toEqual(
      new Map([
        [401, 99],
        [503, 9_901],
      ]),
    );
    // A's settings are still kept: its delivery verifies without a lookup, mid-flood.
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(200);
    expect(p.asked.filter((n) => n === 'acct_A')).toEqual(['acct_A']);
    // The 503s' log lines are rationed with the other refusals.
    expect(p.lines.filter((l) => l.fields.outcome === 'account-unavailable').length).toBeLessThanOrEqual(600);
    // A new minute brings new lookups.
    await p.clock.advance(60_000);
    expect((await p.post('/w/acct_B', bodyOf(), 'whsec_b')).status).toBe(200);
  });

  it('asks again about an unknown name only after a minute, so a repeated guess costs one lookup', async () => {
    const p = platform();
    for (let i = 0; i < 20; i++) await p.post('/w/acct_Q', bodyOf(), 'whsec_a');
    expect(p.asked).toEqual(['acct_Q']);
    // A new account added to the table is found within the minute.
    p.table.acct_Q = ['whsec_q'];
    await p.clock.advance(60_000);
    expect((await p.post('/w/acct_Q', bodyOf(), 'whsec_q')).status).toBe(200);
  });
});

describe('a resolver outage', () => {
  it('a resolver that throws gets 503 (the service retries), never a 500, and the log says why', async () => {
    const p = platform({
      accounts: {
        resolve: () => {
          throw new Error('database down');
        },
      },
    });
    expect(await p.answer(await p.post('/w/acct_A', bodyOf(), 'whsec_a'))).toEqual([
      503,
      '{"outcome":"account-unavailable"}',
      'application/json',
    ]);
    const line = p.lines.find((l) => l.fields.outcome === 'account-unavailable')!;
    expect(line.level).toBe('error');
    expect(String((line.fields as { err?: Error }).err?.message)).toMatch(
      /^\[@payhook\/core\] accounts\.resolve could not give account acct_A's settings/,
    );
    expect(p.runs).toEqual([]);
  });

  it('a resolver that hangs gets 503 at timeoutMs, within the budget', async () => {
    const p = platform({ budgetMs: 8000, accounts: { resolve: () => new Promise(() => {}), timeoutMs: 1500 } });
    let answered: Response | undefined;
    const pending = p.post('/w/acct_A', bodyOf(), 'whsec_a').then((r) => (answered = r));
    await p.clock.advance(1499);
    expect(answered).toBeUndefined();
    await p.clock.advance(1);
    await pending;
    expect(answered!.status).toBe(503);
  });

  it('a resolver that gives no usable secret is a 503 that names the fix', async () => {
    const p = platform({ accounts: { resolve: () => ({ secret: '' }) } });
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(503);
    expect(String((p.lines.at(-1)!.fields as { err?: Error }).err?.message)).toMatch(/gave no \{ secret \}/);
  });

  it('a known account goes on with its last settings while the resolver is down, and is asked again later', async () => {
    let down = false;
    const p = platform({
      accounts: {
        cache: { ttlMs: 60_000 },
        resolve: (name) => {
          if (down) throw new Error('secret manager unreachable');
          return name === 'acct_A' ? { secret: 'whsec_a' } : undefined;
        },
      },
    });
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(200);
    down = true;
    await p.clock.advance(61_000);
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(200);
    expect((await p.post('/w/acct_A', bodyOf(), 'whsec_a')).status).toBe(200);
    expect(p.lines.filter((l) => /accounts\.resolve failed for acct_A/.test(l.message))).toHaveLength(1);
    // An account never seen gets the 503.
    expect((await p.post('/w/acct_B', bodyOf(), 'whsec_b')).status).toBe(503);
  });
});

describe('the options', () => {
  const resolve = () => undefined;
  it.each([
    [{ secret: 's', accounts: { resolve } }, /pass `secret` or `accounts`, not both/],
    [{ accounts: { resolve, from: { header: '' } } }, /accounts\.from must be 'path' or \{ header/],
    [{ accounts: { resolve, timeoutMs: 9000 } }, /accounts\.timeoutMs \(9000\) must be below budgetMs/],
    [{ accounts: { resolve, cache: { max: 0 } } }, /accounts\.cache\.max must be a positive whole number/],
    [{ accounts: {} as never }, /accounts\.resolve must be a function/],
    [{}, /`secret` must be the webhook secret.*or pass `accounts`/],
  ])('%j is refused at creation', (options, message) => {
    expect(() => createReceiver(options as ReceiverOptions)).toThrow(message);
  });

  it("takes ordering: 'fetch' with no receiver-wide client: each account brings its own", () => {
    expect(() => createReceiver({ accounts: { resolve }, ordering: 'fetch' })).not.toThrow();
    expect(() => createReceiver({ secret: 's', ordering: 'fetch' })).toThrow(/ordering: 'fetch' asks the service for the record/);
  });
});

describe('on plain Node, over real HTTP', () => {
  const p = platform();
  let server: http.Server;
  let base = '';
  beforeAll(async () => {
    server = http.createServer(toNodeListener(p.receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const send = (path: string, body: string, secret: string) =>
    fetch(base + path, { method: 'POST', body, headers: signedBody(body, { secret }).headers }).then(async (r) => [
      r.status,
      await r.text(),
    ]);

  it("reads the account from the request's path; A's secret never opens B's", async () => {
    const body = bodyOf();
    expect(await send('/webhooks/epay/acct_B', body, 'whsec_a')).toEqual([401, '{"outcome":"unauthorized"}']);
    expect(await send('/webhooks/epay/nobody', body, 'whsec_a')).toEqual([401, '{"outcome":"unauthorized"}']);
    expect(await send('/webhooks/epay/acct_A', body, 'whsec_a')).toEqual([200, '{"outcome":"processed"}']);
    expect(p.runs.at(-1)!.account).toBe('acct_A');
  });
});
