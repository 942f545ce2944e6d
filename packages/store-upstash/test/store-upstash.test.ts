import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Redis } from '@upstash/redis';
import { createReceiver } from '@payhook/core';
import { upstashStore } from '@payhook/store-upstash';
import { createEvent, signedRequest } from '@payhook/testing';
import { storeConformance } from '@payhook/testing/store';
import { hasRedisServer, startRedis } from '@payhook/test-support/servers/redis-server';
import { requireRedis } from '@payhook/test-support/services';
import { until } from '@payhook/test-support/wait';
import { startUpstashBridge, type UpstashBridge } from '@payhook/test-support/servers/upstash-bridge';

const url = await requireRedis();
const SECRET = 'whsec_upstash_store';
const quiet = { info() {}, warn() {}, error() {} };

describe.skipIf(!url)('upstash', () => {
  let bridge: UpstashBridge;
  beforeAll(async () => {
    bridge = await startUpstashBridge(url!);
  });
  afterAll(() => bridge?.close());

  // The bridge answers in this test's own event loop, as dynalite does for the DynamoDB store: the
  // races' bursts may outlast the 2 s default on a loaded host, which is not what conformance checks.
  storeConformance('upstash (REST, over a real Redis)', {
    make: () => upstashStore({ url: bridge.url, token: bridge.token, prefix: 'payhook-test:', retentionMs: 3_600_000, timeoutMs: 15_000 }),
    shared: true,
  });

  describe('upstash store specifics', () => {
    const prefix = `payhook-upstash-${crypto.randomUUID().slice(0, 8)}:`;
    const store = () => upstashStore({ url: bridge.url, token: bridge.token, prefix });

    it(`runs on @upstash/redis ${inject('peers')['@upstash/redis']}`, async () => {
      // A client made with its defaults names its version in a header; the store's own client sends no telemetry.
      const client = new Redis({ url: bridge.url, token: bridge.token });
      expect((await upstashStore({ client, prefix }).claim(`v-${crypto.randomUUID()}`, 5_000)).status).toBe('claimed');
      // 1.34.0's own package.json spells its version "v1.34.0".
      expect(bridge.sdks()).toEqual([`@upstash/redis@v${inject('peers')['@upstash/redis'].replace(/^v/, '')}`]);
    });

    it('uses one HTTP request per claim and one per complete, running the Redis store’s scripts', async () => {
      const s = store();
      const key = `rt-${crypto.randomUUID()}`;
      await s.get(key); // loads the scripts the first time a test runs on a fresh server
      const before = bridge.requests();
      const c = await s.claim(key, 5_000);
      if (c.status !== 'claimed') throw new Error('expected a claim');
      expect(bridge.requests() - before).toBe(1);
      expect(await s.complete(key, c.token)).toBe(true);
      expect(bridge.requests() - before).toBe(2);
      expect(bridge.commands().slice(-2)).toEqual(['evalsha', 'evalsha']);
    });

    it.runIf(hasRedisServer())('keeps done records across a Redis restart, and sends the scripts again that Redis forgot', async () => {
      // A private server: the shared one's script cache is filled by the other files running beside this one.
      const server = await startRedis('everysec');
      const own = await startUpstashBridge(server.url);
      try {
        const s = upstashStore({ url: own.url, token: own.token });
        const done = `before-${crypto.randomUUID()}`;
        const c = await s.claim(done, 5_000);
        if (c.status !== 'claimed') throw new Error('expected a claim');
        expect(await s.complete(done, c.token)).toBe(true);
        await server.restart();
        // The bridge's own connection comes back on its own; until then a call fails (the receiver's 503).
        const after = await until(() => s.claim(done, 5_000).catch(() => undefined), {
          what: 'a claim after the restart',
          timeoutMs: 10_000,
        });
        expect(after).toMatchObject({ status: 'done', outcome: 'ok' });
        const commands = own.commands();
        expect(commands.slice(commands.lastIndexOf('evalsha'))).toEqual(['evalsha', 'eval']);
        expect(await s.claim(`after-${crypto.randomUUID()}`, 5_000)).toMatchObject({ status: 'claimed', attempt: 1 });
      } finally {
        await own.close();
        await server.stop();
      }
    });

    it('keeps any key whole: markup, braces, quotes and non-ASCII text round-trip through JSON and base64', async () => {
      const s = store();
      for (const key of ['<script>alert(1)</script>', 'a}b{c', '"\\\n', 'ü€ 💳']) {
        const c = await s.claim(key, 5_000);
        if (c.status !== 'claimed') throw new Error(`expected a claim of ${JSON.stringify(key)}`);
        expect(await s.complete(key, c.token, { outcome: 'rejected' })).toBe(true);
        expect(await s.get(key)).toMatchObject({ state: 'done', outcome: 'rejected', attempt: 1 });
      }
    });

    it('takes a client you made, with automatic deserialization on', async () => {
      const client = new Redis({ url: bridge.url, token: bridge.token, retry: false });
      const s = upstashStore({ client, prefix });
      expect(s.client).toBe(client);
      const key = `own-${crypto.randomUUID()}`;
      const c = await s.claim(key, 5_000);
      if (c.status !== 'claimed') throw new Error('expected a claim');
      expect(await s.complete(key, c.token)).toBe(true);
      const done = await s.claim(key, 5_000);
      expect(done).toMatchObject({ status: 'done', outcome: 'ok' });
      expect(done.status === 'done' && done.completedAt).toBeGreaterThan(Date.now() - 60_000);
    });

    it('runs a handler once for 20 concurrent copies landing on two receivers', async () => {
      let runs = 0;
      const make = () =>
        createReceiver({ secret: SECRET, logger: quiet, store: store() }).on('payment.success', async () => {
          runs++;
          await new Promise((r) => setTimeout(r, 50));
        });
      const receivers = [make(), make()];
      const event = createEvent('payment.success');
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => receivers[i % 2]!.handle(signedRequest(event, { secret: SECRET }))),
      );
      expect(runs).toBe(1);
      // One ran it (200); the rest were told it is running (409, retried by the service) or done (200).
      expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(1);
      for (const a of answers) expect([200, 409]).toContain(a.status);
    });
  });

  describe('when Upstash refuses or does not answer', () => {
    it('names the fix for a token Upstash refuses, and the receiver answers 503', async () => {
      const s = upstashStore({ url: bridge.url, token: 'not-the-token' });
      await expect(s.claim(`t-${crypto.randomUUID()}`, 5_000)).rejects.toThrow(
        /^\[@payhook\/store-upstash\] could not claim ".*" \(Unauthorized\)\..*pass the database's REST token \(UPSTASH_REDIS_REST_TOKEN\)/,
      );
      const errors: string[] = [];
      const error = (...line: unknown[]) => errors.push(inspect(line, { depth: 4 }));
      const receiver = createReceiver({ secret: SECRET, logger: { ...quiet, error }, store: s }).on('payment.success', () => {});
      const answer = await receiver.handle(signedRequest(createEvent('payment.success'), { secret: SECRET }));
      expect(answer.status).toBe(503);
      expect(await answer.text()).not.toMatch(/Unauthorized|UPSTASH|token/i);
      expect(errors.join('\n')).toContain('UPSTASH_REDIS_REST_TOKEN');
    });

    it('answers 503 within the budget when Upstash holds every request', async () => {
      const s = upstashStore({ url: bridge.url, token: bridge.token, timeoutMs: 300 });
      const receiver = createReceiver({ secret: SECRET, logger: quiet, store: s, budgetMs: 2_000 }).on('payment.success', () => {});
      bridge.hold(true);
      try {
        const started = performance.now();
        const answer = await receiver.handle(signedRequest(createEvent('payment.success'), { secret: SECRET }));
        expect(answer.status).toBe(503);
        expect(performance.now() - started).toBeLessThan(2_000);
      } finally {
        bridge.hold(false);
      }
    });

    it('keeps the cause, sends a refused call once (no EVAL after a non-NOSCRIPT error)', async () => {
      const s = upstashStore({ url: bridge.url, token: 'not-the-token' });
      const before = bridge.requests();
      const error = await s.get(`t-${crypto.randomUUID()}`).catch((e: Error) => e);
      expect(bridge.requests() - before).toBe(1);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).cause).toBeInstanceOf(Error);
      expect(((error as Error).cause as Error).message).toMatch(/Unauthorized/);
    });

    it('names Upstash and the wait when it does not answer', async () => {
      const s = upstashStore({ url: bridge.url, token: bridge.token, timeoutMs: 100 });
      bridge.hold(true);
      try {
        await expect(s.get('held')).rejects.toThrow(/could not read "held" \(no answer from Upstash within 100 ms\)/);
      } finally {
        bridge.hold(false);
      }
    });

    it('an unreachable URL fails at once (its own client does not retry) and names the URL to check', async () => {
      const { createServer } = await import('node:net');
      const gone = createServer();
      await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', () => resolve()));
      const port = (gone.address() as { port: number }).port;
      await new Promise<void>((resolve) => gone.close(() => resolve()));
      const s = upstashStore({ url: `http://127.0.0.1:${port}`, token: 't', timeoutMs: 1_500 });
      const error = (await s.claim('k', 5_000).catch((e: Error) => e)) as Error;
      expect(error.message).toMatch(
        /^\[@payhook\/store-upstash\] could not claim "k" \(.*\)\. The receiver answers 503 so the service retries; check that the REST URL \(UPSTASH_REDIS_REST_URL\) is right and that the database is reachable\.$/,
      );
      expect(error.message).not.toMatch(/no answer from Upstash/);
    });

    it('its own client sends no telemetry headers (1.34 sends its name: it reads only UPSTASH_DISABLE_TELEMETRY on Node)', async () => {
      const own = await startUpstashBridge(url!);
      const version = inject('peers')['@upstash/redis'].replace(/^v/, '');
      try {
        expect((await upstashStore({ url: own.url, token: own.token }).claim(`tm-${crypto.randomUUID()}`, 5_000)).status).toBe('claimed');
        expect(own.sdks()).toEqual(version.startsWith('1.34.') ? [`@upstash/redis@v${version}`] : []);
      } finally {
        await own.close();
      }
    });

    it('keys records under payhook: by default', async () => {
      const key = `default-prefix-${crypto.randomUUID()}`;
      const s = upstashStore({ url: bridge.url, token: bridge.token });
      expect((await s.claim(key, 5_000)).status).toBe('claimed');
      const raw = new Redis({ url: bridge.url, token: bridge.token, retry: false });
      expect((await raw.keys(`*${key}*`)).every((k) => k.startsWith('payhook:'))).toBe(true);
      expect(await raw.keys(`payhook:*${key}*`)).not.toEqual([]);
    });

    it('names the fix from what Upstash said, on the first line only, without the command', async () => {
      const failing = (message: string) =>
        upstashStore({
          client: {
            evalsha: async () => {
              throw new Error(message);
            },
            eval: async () => {
              throw new Error('eval should not run');
            },
          } as unknown as Redis,
        }).get('k');
      await expect(failing('NOPERM this user has no permissions to run the evalsha command')).rejects.toThrow(
        /^\[@payhook\/store-upstash\] could not read "k" \(NOPERM this user has no permissions to run the evalsha command\)\. The receiver answers 503 so the service retries; the token is read-only: pass the database's standard REST token \(UPSTASH_REDIS_REST_TOKEN\)\.$/,
      );
      await expect(failing('ERR invalid username-password pair or user is disabled')).rejects.toThrow(
        /Upstash refused the token: pass the database's REST token \(UPSTASH_REDIS_REST_TOKEN\), not its password\.$/,
      );
      await expect(failing('ERR wrong number of arguments, command was: ["evalsha","abc"]\nmore')).rejects.toThrow(
        /could not read "k" \(ERR wrong number of arguments\)\. .*; check that the REST URL/,
      );
      await expect(failing('ERR first line\nsecond line')).rejects.toThrow(/\(ERR first line\)\./);
      const long = await failing(`ERR ${'x'.repeat(500)}`).catch((e: Error) => e.message);
      expect(long).toContain(`(ERR ${'x'.repeat(196)}).`);
    });

    it('refuses a client with a url or a token beside it', () => {
      const client = new Redis({ url: 'https://x.upstash.io', token: 't' });
      expect(() => upstashStore({ client, url: 'https://x.upstash.io' })).toThrow(/pass either `client` or `url` and `token`/);
      expect(() => upstashStore({ client, token: 't' })).toThrow(/pass either `client` or `url` and `token`/);
      expect(upstashStore({ client }).client).toBe(client);
    });

    it('quotes the URL it refuses and tells an empty token from none', () => {
      expect(() => upstashStore({ url: 'not a url', token: 't' })).toThrow(
        /^\[@payhook\/store-upstash\] url must be the database's REST URL, https:\/\/<name>\.upstash\.io \(UPSTASH_REDIS_REST_URL\); got "not a url"\. the REST URL is on/,
      );
      expect(() => upstashStore({ url: 'ftp://x.upstash.io', token: 't' })).toThrow(/; got "ftp:\/\/x\.upstash\.io"\. the REST URL/);
      expect(() => upstashStore({ token: 't' })).toThrow(/; got null\. the REST URL/);
      expect(() => upstashStore({ url: 'https://x.upstash.io', token: '' })).toThrow(
        /REST token \(UPSTASH_REDIS_REST_TOKEN\); got an empty string\.$/,
      );
      expect(() => upstashStore({ url: 'https://x.upstash.io', token: ' ' })).toThrow(/; got none\.$/);
    });

    it('refuses missing, TCP and malformed URLs, an empty token, and two ways at once, naming the fix', () => {
      expect(() => upstashStore({})).toThrow(/^\[@payhook\/store-upstash\] pass `url` and `token`.*UPSTASH_REDIS_REST_URL/);
      expect(() => upstashStore({ url: 'rediss://default:pw@eu1.upstash.io:6379', token: 't' })).toThrow(
        /REST URL, https:\/\/<name>\.upstash\.io.*That is the TCP URL, for @payhook\/store-redis/,
      );
      expect(() => upstashStore({ url: 'not a url', token: 't' })).toThrow(/url must be the database's REST URL/);
      expect(() => upstashStore({ url: 'https://x.upstash.io' })).toThrow(/token must be the database's REST token.*got none/);
      expect(() => upstashStore({ url: 'https://x.upstash.io', token: ' ' })).toThrow(/token must be the database's REST token/);
      expect(() =>
        upstashStore({ url: 'https://x.upstash.io', token: 't', client: new Redis({ url: 'https://x.upstash.io', token: 't' }) }),
      ).toThrow(/pass either `client` or `url` and `token`/);
      expect(() => upstashStore({ url: 'https://x.upstash.io', token: 't', prefix: 'a{b' })).toThrow(/prefix must not contain/);
      expect(() => upstashStore({ url: 'https://x.upstash.io', token: 't', timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
    });
  });
});
