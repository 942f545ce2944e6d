import type { AddressInfo } from 'node:net';
import { ConditionalCheckFailedException, DynamoDBClient, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { dynamoStore } from '@payhook/store-dynamodb';
import { startDynalite } from './dynalite.js';

const TABLE = 'payhook-paths';
const WRONG_KEY = 'payhook-wrong-key';
const { client } = await startDynalite([
  [TABLE, 'pk'],
  [WRONG_KEY, 'id'],
]);

const T0 = 1_800_000_000_000;
/** A store on dynalite whose clock the test moves. */
function clocked(opts: { retentionMs?: number } = {}) {
  const clock = { t: T0 };
  const store = dynamoStore({ table: TABLE, client: client(), prefix: `${crypto.randomUUID()}:`, now: () => clock.t, ...opts });
  return { store, clock };
}

type Sent = { name: string; input: Record<string, unknown> };
/** A client whose every answer the test scripts, by the order of the commands sent. */
function scripted(answer: (sent: Sent, n: number) => unknown) {
  const sent: Sent[] = [];
  const fake = {
    send: vi.fn(async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const s = { name: command.constructor.name, input: command.input };
      sent.push(s);
      if (sent.length > 20) throw new Error('too many requests');
      const out = answer(s, sent.length - 1);
      if (out instanceof Error) throw out;
      return out;
    }),
    destroy: vi.fn(),
  };
  return { client: fake as unknown as DynamoDBClient, sent, fake };
}
const ccf = () => new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
const named = (name: string, message = 'no') => Object.assign(new Error(message), { name });

describe('dynamodb store: record ends and lease edges (dynalite, clock moved)', () => {
  it('get: a record is gone at the very ms its retention ends; a lease is lapsed at the ms it ends', async () => {
    const { store, clock } = clocked();
    const c = await store.claim('k', 5_000);
    if (c.status !== 'claimed') throw new Error('expected a claim');
    expect(await store.get('k')).toEqual({ state: 'claimed', attempt: 1, leaseExpiresAt: T0 + 5_000 });
    clock.t = T0 + 4_999;
    expect((await store.get('k'))?.state).toBe('claimed');
    clock.t = T0 + 5_000;
    expect(await store.get('k')).toEqual({ state: 'released', attempt: 1 });

    const d = await store.claim('d', 5_000);
    if (d.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('d', d.token, { ttlMs: 1_000 });
    clock.t += 999;
    expect((await store.get('d'))?.state).toBe('done');
    clock.t += 1;
    expect(await store.get('d')).toBeUndefined();
  });

  it('get: a released record says released with its attempt, not claimed', async () => {
    const { store } = clocked();
    const c = await store.claim('r', 5_000);
    if (c.status !== 'claimed') throw new Error('expected a claim');
    expect(await store.release('r', c.token)).toBe(true);
    expect(await store.get('r')).toEqual({ state: 'released', attempt: 1 });
    const again = await store.claim('r', 5_000);
    expect(again).toMatchObject({ status: 'claimed', attempt: 2 });
  });

  it('complete is idempotent for its own token after a lost answer, not for another token, and not past its end', async () => {
    const { store, clock } = clocked();
    const c = await store.claim('c', 5_000);
    if (c.status !== 'claimed') throw new Error('expected a claim');
    expect(await store.complete('c', c.token, { ttlMs: 10_000 })).toBe(true);
    // The first answer was lost: the retry says it is done, whoever asks with the same token.
    expect(await store.complete('c', c.token)).toBe(true);
    expect(await store.complete('c', 'someone-else')).toBe(false);
    clock.t = T0 + 9_999;
    expect(await store.complete('c', c.token)).toBe(true);
    clock.t = T0 + 10_000;
    expect(await store.complete('c', c.token)).toBe(false);
  });
});

describe('dynamodb store: claim read-then-write paths (scripted client)', () => {
  it('a claim costs one write when the key is new; complete one write when it lands', async () => {
    const { client: c, sent } = scripted(() => ({}));
    const store = dynamoStore({ table: TABLE, client: c, now: () => T0 });
    const claim = await store.claim('k', 5_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    expect(await store.complete('k', claim.token)).toBe(true);
    expect(sent.map((s) => s.name)).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
  });

  it('reads consistently, so a copy sees the write that just claimed it', async () => {
    const { client: c, sent } = scripted((s) => (s.name === 'GetItemCommand' ? {} : ccf()));
    await dynamoStore({ table: TABLE, client: c, now: () => T0 }).get('k');
    expect(sent[0]!.input.ConsistentRead).toBe(true);
  });

  it('a record that vanished between the failed write and the read is claimed on the second write', async () => {
    const { client: c } = scripted((_, n) => (n === 0 ? ccf() : n === 1 ? {} : { Attributes: { att: { N: '4' } } }));
    const store = dynamoStore({ table: TABLE, client: c, now: () => T0 });
    expect(await store.claim('k', 5_000)).toMatchObject({ status: 'claimed', attempt: 4 });
  });

  it('a done record read at the ms its retention ends is claimed again, not answered done', async () => {
    const done = {
      Item: { pk: { S: 'k' }, st: { S: 'done' }, oc: { S: 'ok' }, ca: { N: String(T0 - 1) }, ex: { N: String(T0) }, att: { N: '1' } },
    };
    const { client: c } = scripted((_, n) => (n === 0 ? ccf() : n === 1 ? done : { Attributes: { att: { N: '2' } } }));
    expect(await dynamoStore({ table: TABLE, client: c, now: () => T0 }).claim('k', 5_000)).toMatchObject({
      status: 'claimed',
      attempt: 2,
    });
  });

  it('a released record is claimed again, not answered in-progress', async () => {
    const released = { Item: { pk: { S: 'k' }, st: { S: 'released' }, ex: { N: String(T0 + 60_000) }, att: { N: '1' } } };
    const { client: c } = scripted((_, n) => (n === 0 ? ccf() : n === 1 ? released : { Attributes: { att: { N: '2' } } }));
    expect(await dynamoStore({ table: TABLE, client: c, now: () => T0 }).claim('k', 5_000)).toMatchObject({
      status: 'claimed',
      attempt: 2,
    });
  });

  it('gives up after three rounds of write, read, write when the record keeps changing, and says so', async () => {
    const { client: c, sent } = scripted((s) => (s.name === 'GetItemCommand' ? {} : ccf()));
    await expect(dynamoStore({ table: TABLE, client: c, now: () => T0 }).claim('k', 5_000)).rejects.toThrow(
      /^\[@payhook\/store-dynamodb\] could not claim "k": it changed under three attempts in a row\. The receiver answers 503/,
    );
    expect(sent).toHaveLength(9);
  });
});

describe('dynamodb store: errors name what failed and the fix', () => {
  const fails = async (p: Promise<unknown>) => {
    const error = await p.then(
      () => undefined,
      (e: Error) => e,
    );
    if (!error) throw new Error('expected a rejection');
    return error as Error & { cause?: unknown };
  };

  it('a wrong key schema (real, on dynalite): check the partition key', async () => {
    const store = dynamoStore({ table: WRONG_KEY, client: client() });
    const e = await fails(store.claim('k', 5_000));
    expect(e.message).toMatch(
      /^\[@payhook\/store-dynamodb\] could not claim "k" \(ValidationException: .*check that payhook-wrong-key's partition key is pk, of type String\.$/,
    );
    expect((e.cause as Error).name).toBe('ValidationException');
    expect((await fails(store.get('k'))).message).toMatch(/could not read "k" \(ValidationException.*partition key is pk/);
  });

  it('an endpoint that refuses connections (real): check region and endpoint, and that the table exists', async () => {
    const { createServer } = await import('node:net');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const c = new DynamoDBClient({
      endpoint: `http://127.0.0.1:${port}`,
      region: 'local',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      maxAttempts: 1,
    });
    try {
      const e = await fails(dynamoStore({ table: TABLE, client: c }).get('k'));
      expect(e.message).toMatch(
        /^\[@payhook\/store-dynamodb\] could not read "k" \(.*\)\. The receiver answers 503 so the service retries; check that DynamoDB is reachable from here \(the client's region, AWS_REGION, and endpoint\) and that payhook-paths exists\.$/,
      );
    } finally {
      c.destroy();
    }
  });

  it('the table missing (the SDK error class): create the table; the cause is kept', async () => {
    const cause = new ResourceNotFoundException({ message: 'Requested resource not found', $metadata: {} });
    const { client: c } = scripted(() => cause);
    const e = await fails(dynamoStore({ table: TABLE, client: c }).release('k', 'tk'));
    expect(e.message).toBe(
      '[@payhook/store-dynamodb] could not release "k" (ResourceNotFoundException: Requested resource not found). The receiver answers 503 so the service retries; create the table payhook-paths with partition key pk (String), and TTL on the attribute ttl (README), or pass the right name.',
    );
    expect(e.cause).toBe(cause);
  });

  it.each(['AccessDeniedException', 'UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException'])(
    '%s: give the role GetItem and UpdateItem, or check its credentials',
    async (name) => {
      const { client: c } = scripted(() => named(name, 'denied'));
      const e = await fails(dynamoStore({ table: TABLE, client: c }).extend('k', 'tk', 5_000));
      expect(e.message).toMatch(
        new RegExp(
          `^\\[@payhook/store-dynamodb\\] could not extend "k" \\(${name}: denied\\)\\. .*; give the function's role dynamodb:GetItem and dynamodb:UpdateItem on payhook-paths, or check its credentials\\.$`,
        ),
      );
    },
  );

  it('names the step that failed: the read and the second write of a claim, the read of a complete', async () => {
    const at = (fail: number) =>
      scripted((s, n) => (n === fail ? named('AccessDeniedException') : s.name === 'GetItemCommand' ? {} : ccf())).client;
    const store = (fail: number) => dynamoStore({ table: TABLE, client: at(fail), now: () => T0 });
    expect((await fails(store(1).claim('k', 5_000))).message).toMatch(/^\[@payhook\/store-dynamodb\] could not claim "k" \(AccessDenied/);
    expect((await fails(store(2).claim('k', 5_000))).message).toMatch(/^\[@payhook\/store-dynamodb\] could not claim "k" \(AccessDenied/);
    expect((await fails(store(1).complete('k', 'tk'))).message).toMatch(
      /^\[@payhook\/store-dynamodb\] could not complete "k" \(AccessDenied/,
    );
    expect((await fails(store(0).complete('k', 'tk'))).message).toMatch(
      /^\[@payhook\/store-dynamodb\] could not complete "k" \(AccessDenied/,
    );
  });

  it('a failed write is an error, not a lost condition: release and extend reject instead of answering false', async () => {
    const { client: c } = scripted((s) => (s.name === 'GetItemCommand' ? {} : named('InternalServerError')));
    const store = dynamoStore({ table: TABLE, client: c, now: () => T0 });
    await expect(store.release('k', 'tk')).rejects.toThrow(/could not release "k" \(InternalServerError/);
    await expect(store.extend('k', 'tk', 5_000)).rejects.toThrow(/could not extend "k" \(InternalServerError/);
    await expect(store.complete('k', 'tk')).rejects.toThrow(/could not complete "k" \(InternalServerError/);
  });

  it('cuts a long reason to 300 characters', async () => {
    const { client: c } = scripted(() => named('InternalServerError', 'x'.repeat(2_000)));
    const e = await fails(dynamoStore({ table: TABLE, client: c }).get('k'));
    expect(e.message).toContain(`(InternalServerError: ${'x'.repeat(300 - 'InternalServerError: '.length)}). The receiver`);
  });

  it('a DynamoDB that does not answer: names DynamoDB and the wait', async () => {
    const { client: c } = scripted(() => new Promise(() => {}));
    const e = await fails(dynamoStore({ table: TABLE, client: c, timeoutMs: 20 }).get('k'));
    expect(e.message).toMatch(/could not read "k" \(Error: no answer from DynamoDB within 20 ms\)/);
  });
});

describe('dynamodb store: options', () => {
  it('refuses table names DynamoDB refuses, quoting what it got', () => {
    for (const table of [undefined, 42, 'ab', 'x'.repeat(256), 'a b-table', 'my-table!', 'tab/le'] as unknown[]) {
      expect(() => dynamoStore({ table } as never)).toThrow(/^\[@payhook\/store-dynamodb\] table must be a DynamoDB table name/);
    }
    expect(() => dynamoStore({ table: 'a b' })).toThrow(/; got "a b"\. Create the table/);
    expect(() => dynamoStore({} as never)).toThrow(/; got null\. Create the table/);
    for (const table of ['abc', 'x'.repeat(255), 'Shop_events.v2-prod'])
      expect(() => dynamoStore({ table, client: client() })).not.toThrow();
  });

  it('names the option that is wrong', async () => {
    expect(() => dynamoStore({ table: TABLE, client: client(), timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
    const store = dynamoStore({ table: TABLE, client: client() });
    await expect(store.claim('k', 0)).rejects.toThrow(/^\[@payhook\/store-dynamodb\] leaseMs must be a positive number/);
    await expect(store.extend('k', 'tk', -1)).rejects.toThrow(/^\[@payhook\/store-dynamodb\] leaseMs must be a positive number/);
    await expect(store.complete('k', 'tk', { ttlMs: 0 })).rejects.toThrow(/^\[@payhook\/store-dynamodb\] ttlMs must be a positive number/);
  });

  it('close destroys the client it made, never the one you passed', async () => {
    const { client: yours, fake } = scripted(() => ({}));
    await dynamoStore({ table: TABLE, client: yours }).close();
    expect(fake.destroy).not.toHaveBeenCalled();
    const owned = dynamoStore({ table: TABLE });
    const destroy = vi.spyOn(owned.client, 'destroy');
    await owned.close();
    expect(destroy).toHaveBeenCalledTimes(1);
  });

  it('the client it makes tries twice at most and waits no longer than timeoutMs', async () => {
    const owned = dynamoStore({ table: TABLE, timeoutMs: 750 });
    try {
      expect(await owned.client.config.maxAttempts()).toBe(2);
      const handler = owned.client.config.requestHandler as unknown as { configProvider: Promise<Record<string, unknown>> };
      expect(await handler.configProvider).toMatchObject({ connectionTimeout: 750, requestTimeout: 750 });
    } finally {
      await owned.close();
    }
  });
});
