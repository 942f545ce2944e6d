import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { createReceiver } from '@payhook/core';
import { dynamoStore } from '@payhook/store-dynamodb';
import { createEvent, signedRequest } from '@payhook/testing';
import { storeConformance } from '@payhook/testing/store';
import { startDynalite } from './dynalite.js';

const TABLE = 'payhook-deliveries';
const { client, admin } = await startDynalite([[TABLE, 'pk']]);

// Every store reads this clock: lease and retention tests move it instead of sleeping.
let now = Date.now();
// dynalite answers in this test's own event loop: the races put 80 conditional writes in flight at
// once, and on a loaded 2-core host the last answer came after the store's 2 s default (stop 66's
// CI). The emulator's speed is not what conformance checks, so it gets a longer wait; the timeout
// itself is tested in store-dynamodb-paths.test.ts.
const EMULATOR_TIMEOUT_MS = 15_000;
storeConformance('dynamodb (dynalite)', {
  make: () => dynamoStore({ table: TABLE, client: client(), prefix: 'conf:', now: () => now, timeoutMs: EMULATOR_TIMEOUT_MS }),
  shared: true,
  advance: (ms) => {
    now += ms;
  },
});

describe('dynamodb store specifics', () => {
  it(`runs on @aws-sdk/client-dynamodb ${inject('peers')['@aws-sdk/client-dynamodb']}`, async () => {
    // The SDK names its version in the user agent of every request.
    const c = client();
    let agent = '';
    c.middlewareStack.add(
      (next) => async (args) => {
        agent = String((args.request as { headers: Record<string, string> }).headers['user-agent'] ?? '');
        return next(args);
      },
      { step: 'finalizeRequest' },
    );
    await dynamoStore({ table: TABLE, client: c }).get('version-probe');
    // It names the release its core was built for, at times one minor behind the client's own
    // (3.1169.0 says 3.1168.0): near enough to tell 3.600 from the newest.
    const named = /aws-sdk-js\/(\d+)\.(\d+)\./.exec(agent);
    const [major, minor] = inject('peers')['@aws-sdk/client-dynamodb'].split('.').map(Number);
    expect(Number(named?.[1])).toBe(major);
    expect(Math.abs(Number(named?.[2]) - minor!)).toBeLessThanOrEqual(1);
  });

  it('writes the TTL attribute in seconds beside the record, so DynamoDB deletes it when its retention ends', async () => {
    const t = Date.now();
    const s = dynamoStore({ table: TABLE, client: client(), retentionMs: 60_000, now: () => t });
    const c = await s.claim('ttl-probe', 5_000);
    if (c.status !== 'claimed') throw new Error('expected a claim');
    await s.complete('ttl-probe', c.token);
    const { Item } = await admin.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'ttl-probe' } } }));
    expect(Number(Item!.ttl!.N)).toBe(Math.ceil((t + 60_000) / 1000));
  });

  it('runs a handler once for 20 concurrent copies landing on two receivers', async () => {
    let runs = 0;
    const make = () =>
      createReceiver({
        secret: 'whsec_dynamo',
        logger: { warn() {}, error() {} },
        store: dynamoStore({ table: TABLE, client: client(), timeoutMs: EMULATOR_TIMEOUT_MS }),
      }).on('payment.success', async () => {
        runs++;
        await new Promise((r) => setTimeout(r, 20));
      });
    const receivers = [make(), make()];
    const event = createEvent('payment.success');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => receivers[i % 2]!.handle(signedRequest(event, { secret: 'whsec_dynamo' }))),
    );
    expect(runs).toBe(1);
    for (const a of answers) expect([200, 409]).toContain(a.status);
  });

  it('names the fix for a table that does not exist, and the receiver answers 503', async () => {
    const s = dynamoStore({ table: 'no-such-table', client: client() });
    await expect(s.claim('k', 5_000)).rejects.toThrow(
      /^\[@payhook\/store-dynamodb\] could not claim "k" \(ResourceNotFoundException.*create the table no-such-table with partition key pk \(String\)/,
    );
    const receiver = createReceiver({ secret: 'whsec_dynamo', store: s, logger: { warn() {}, error() {} } }).on(
      'payment.success',
      () => {},
    );
    const answer = await receiver.handle(signedRequest(createEvent('payment.success'), { secret: 'whsec_dynamo' }));
    expect(answer.status).toBe(503);
    expect(await answer.text()).not.toContain('no-such-table');
  });

  it('answers 503 within the budget when DynamoDB does not answer', async () => {
    // A socket that accepts and never answers: a black-holed endpoint.
    const { createServer } = await import('node:net');
    const hole = createServer(() => {});
    await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', () => resolve()));
    const silent = new DynamoDBClient({
      endpoint: `http://127.0.0.1:${(hole.address() as AddressInfo).port}`,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    try {
      const receiver = createReceiver({
        secret: 'whsec_dynamo',
        store: dynamoStore({ table: TABLE, client: silent, timeoutMs: 200 }),
        budgetMs: 2_000,
        logger: { warn() {}, error() {} },
      }).on('payment.success', () => {});
      const started = performance.now();
      expect((await receiver.handle(signedRequest(createEvent('payment.success'), { secret: 'whsec_dynamo' }))).status).toBe(503);
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      silent.destroy();
      hole.close();
    }
  });

  it('refuses a missing or malformed table name and bad times, naming the fix', () => {
    expect(() => dynamoStore({ table: '' })).toThrow(
      /^\[@payhook\/store-dynamodb\] table must be a DynamoDB table name.*partition key pk \(String\)/,
    );
    expect(() => dynamoStore({ table: 'a b' })).toThrow(/table must be a DynamoDB table name/);
    expect(() => dynamoStore({ table: TABLE, client: client(), retentionMs: 0 })).toThrow(/retentionMs must be a positive number/);
  });
});
