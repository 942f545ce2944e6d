// startReferenceService with a platform's merchant accounts: each account's key, secret and
// client, deliveries to `<path>/<id>` through the relay or to a per-transaction callbackUrl over
// real HTTP on 127.0.0.1, retries on the virtual clock, and one account's key kept out of another's.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, memoryStore, verifySignature } from '@payhook/core';
import { createEvent, deliver, startReferenceService, type TestReferenceService } from '@payhook/testing';
import { afterEach, describe, expect, it } from 'vitest';

const IDS = ['shop-a', 'shop-b', 'shop-c'] as const;
const quiet = { info() {}, warn() {}, error() {} };
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function started(options: Parameters<typeof startReferenceService>[0]): Promise<TestReferenceService> {
  const ref = await startReferenceService(options);
  cleanup.push(ref.close);
  return ref;
}

/** Which accounts' secrets verify `body` signed as `signature` (core's verifySignature, one secret at a time). */
const signedBy = (ref: TestReferenceService, body: string | Buffer, signature: unknown) =>
  IDS.filter((id) => verifySignature(body, signature, ref.account(id).webhookSecret).ok);

/**
 * A platform's endpoint `/webhooks/epay/:account`: one payhook receiver with `accounts`, which reads
 * the account from the path's last segment and verifies with that account's secret only. What
 * each account processed is kept under its name.
 */
function platform(ref: TestReferenceService) {
  const processed: Record<string, string[]> = Object.fromEntries(IDS.map((id) => [id, []]));
  const receiver = createReceiver({
    accounts: {
      resolve: (name) => {
        if (!(IDS as readonly string[]).includes(name)) return undefined;
        const account = ref.account(name);
        return { secret: account.webhookSecret, client: account.client };
      },
    },
    store: memoryStore(),
    logger: quiet,
  }).onAny((event, ctx) => void processed[ctx.account!]!.push(`${event.event} ${event.reference}`));
  return { receiver, processed };
}

describe('startReferenceService({ merchants })', () => {
  it('delivers each account’s webhooks to <path>/<id> through the relay, signed with that account’s secret only', async () => {
    const ref = await started({ merchants: IDS.map((id) => ({ id })), path: '/webhooks/epay' });
    expect([ref.accountId, ref.account('shop-a')]).toEqual(['shop-a', ref]);
    const shop = platform(ref);
    await ref.deliverTo(shop.receiver);

    const refs: Record<string, string> = {};
    for (const id of IDS) {
      const account = ref.account(id);
      expect(account.callbackUrl).toBe(`${ref.callbackUrl.replace(/\/shop-a$/, '')}/${id}`);
      const { reference } = await account.createTransaction();
      refs[id] = reference;
      expect(await account.pay(reference)).toMatchObject({ status: 'completed' });
      const [delivery] = account.deliveries({ reference });
      expect(delivery).toMatchObject({ state: 'delivered', attempts: [{ status: 200 }] });
      expect(signedBy(ref, delivery!.body, delivery!.signature)).toEqual([id]);
    }
    expect(shop.processed).toEqual(Object.fromEntries(IDS.map((id) => [id, [`payment.success ${refs[id]}`]])));
    // Keys, secrets and clients are each account's own.
    expect(new Set(IDS.flatMap((id) => [ref.account(id).apiKey, ref.account(id).webhookSecret])).size).toBe(6);
    expect(ref.account('shop-b').env).toMatchObject({
      PAYHOOK_API_KEY: ref.account('shop-b').apiKey,
      PAYHOOK_WEBHOOK_SECRET: ref.account('shop-b').webhookSecret,
    });

    // deliver() for a chosen account, without the service: its secret and its path.
    const c = ref.account('shop-c');
    const event = createEvent('payment.refunded');
    const ok = await deliver(shop.receiver, event, { secret: c.webhookSecret, path: '/webhooks/epay/shop-c', retrySchedule: false });
    expect(ok.deliveries[0]!.attempts.map((a) => a.status)).toEqual([200]);
    const wrong = await deliver(shop.receiver, event, { secret: ref.webhookSecret, path: '/webhooks/epay/shop-c', retrySchedule: false });
    expect(wrong.deliveries[0]!.attempts.map((a) => a.status)).toEqual([401]);
  });

  it('a per-transaction callbackUrl wins: real HTTP to /webhooks/epay/<id> on 127.0.0.1, retried on the virtual clock', async () => {
    const hooks: { path: string; body: Buffer; signature: unknown }[] = [];
    let failuresLeft = 2; // shop-b's endpoint is down for its first two attempts
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hooks.push({ path: req.url!, body: Buffer.concat(chunks), signature: req.headers['x-service-signature'] });
        res.writeHead(req.url!.endsWith('/shop-b') && failuresLeft-- > 0 ? 503 : 200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ref = await started({ merchants: IDS.map((id) => ({ id })) });

    for (const id of IDS) {
      const account = ref.account(id);
      const { reference } = await account.createTransaction({ callbackUrl: `${origin}/webhooks/epay/${id}` });
      await account.pay(reference);
    }
    expect(ref.account('shop-b').deliveries()[0]).toMatchObject({ state: 'retrying', attempts: [{ status: 503 }] });
    await ref.advance(3 * 60_000); // attempts 2 and 3, at 1 and 3 minutes

    expect(
      ref
        .account('shop-b')
        .deliveries()[0]!
        .attempts.map((a) => a.status),
    ).toEqual([503, 503, 200]);
    expect(hooks.map((h) => h.path)).toEqual([
      '/webhooks/epay/shop-a',
      '/webhooks/epay/shop-b',
      '/webhooks/epay/shop-c',
      '/webhooks/epay/shop-b',
      '/webhooks/epay/shop-b',
    ]);
    for (const h of hooks) expect(signedBy(ref, h.body, h.signature)).toEqual([h.path.split('/').pop()]);
    // The accounts' own callback URLs (the relay) got nothing.
    expect(ref.service.deliveries().every((d) => d.url?.startsWith(origin))).toBe(true);

    // Without one, the account's own URL, the relay, forwards below a URL target's path.
    await ref.deliverTo(`${origin}/hooks/epay`);
    const c = ref.account('shop-c');
    const { reference } = await c.createTransaction();
    await c.cancel(reference);
    expect(c.deliveries({ reference })).toMatchObject([{ url: c.callbackUrl, state: 'delivered' }]);
    expect(hooks.at(-1)!.path).toBe('/hooks/epay/shop-c');
    expect(signedBy(ref, hooks.at(-1)!.body, hooks.at(-1)!.signature)).toEqual(['shop-c']);
  });

  it('one account’s key cannot see, verify, cancel or move another’s transaction, nor read its deliveries or faults', async () => {
    const ref = await started({
      merchants: [
        { id: 'shop-a', apiKey: 'sk_test_given_key_of_shop_a', webhookSecret: 'whsec_given_a' },
        { id: 'shop-b', name: 'Shop B' },
      ],
    });
    const [a, b] = [ref.account('shop-a'), ref.account('shop-b')];
    expect([a.apiKey, a.webhookSecret]).toEqual(['sk_test_given_key_of_shop_a', 'whsec_given_a']);
    const { reference } = await a.createTransaction();
    await a.addFault({ type: 'drop', reference });
    await a.pay(reference);

    await expect(b.client.transactions.retrieve(reference)).rejects.toMatchObject({ status: 404 });
    await expect(b.client.transactions.verify(reference)).rejects.toMatchObject({ status: 404 });
    await expect(b.client.transactions.cancel(reference)).rejects.toMatchObject({ status: 404 });
    await expect(b.refund(reference)).rejects.toThrow(/^\[@payhook\/testing\] POST .*\/refund failed \(404\): No sandbox transaction/);
    expect((await b.fetch(`/v1/transactions/${reference}/timeline`)).status).toBe(404);
    expect([b.deliveries(), await b.faults()]).toEqual([[], []]);
    expect((await b.client.transactions.list()).data).toEqual([]);
    expect(a.deliveries({ reference })).toMatchObject([{ state: 'dropped' }]);
    expect((await a.client.transactions.verify(reference)).status).toBe('completed');
  });

  it('keeps the one-merchant API as it was, and says what to pass when an option is wrong', async () => {
    const ref = await started({});
    expect([ref.accountId, ref.account('test'), ref.callbackUrl]).toEqual(['test', ref, expect.stringMatching(/\/webhooks$/)]);
    expect(() => ref.account('shop-x')).toThrow(
      /^\[@payhook\/testing\] account\("shop-x"\): no such merchant account; the service was started with test\. Name it in startReferenceService\(\{ merchants: \[\{ id: "shop-x" \}\] \}\)\.$/,
    );
    const wrong: [Parameters<typeof startReferenceService>[0], RegExp][] = [
      [{ merchants: [] }, /merchants must be a list of accounts such as/],
      [{ merchants: [{ id: 'a/b' }] }, /merchants\[0\]\.id must be 1 to 64 letters, digits, "_" or "-"/],
      [{ merchants: [{ id: 'a' }, { id: 'a' }] }, /two merchants share the id "a"; give each its own/],
      [{ merchants: [{ id: 'a', apiKey: 'sk_live_not_in_tests_1' }] }, /merchants\[0\]\.apiKey must be a sandbox key \(sk_test_…\)/],
      [{ merchants: [{ id: 'a' }], webhookSecret: 'whsec_x' }, /give each account's apiKey and webhookSecret in its own entry/],
    ];
    for (const [options, says] of wrong) {
      await expect(startReferenceService(options)).rejects.toThrow(says);
      await expect(startReferenceService(options)).rejects.toThrow(/^\[@payhook\/testing\] startReferenceService: /);
    }
    const shared = 'sk_test_one_key_for_two_shops';
    await expect(
      startReferenceService({
        merchants: [
          { id: 'a', apiKey: shared },
          { id: 'b', apiKey: shared },
        ],
      }),
    ).rejects.toThrow(/^\[@payhook\/reference\] merchants a and b share an API key/);
  });
});
