import { createReferenceService, type ReferenceService, type RunningServer } from '@payhook/reference';
import { testAccounts, type TestAccount } from './accounts.js';
import { serviceHandle } from './service-handle.js';
import type { StartReferenceServiceOptions, TestReferenceService } from './service-types.js';
import { startWebhookRelay } from './webhook-relay.js';

export type { MoveOptions, StartReferenceServiceOptions, TestMerchant, TestReferenceService } from './service-types.js';

/**
 * Start the reference service for a test: a manual (virtual) clock, a sandbox merchant with a
 * generated key and secret (or several accounts, `merchants`), the API on 127.0.0.1 port 0, and
 * a relay on another free port as the callback URL, forwarding each webhook to the target you
 * give (an app, a handler, a URL). Close it with `close()` (in `finally` or `afterEach`).
 * `await using ref = …` does the same where the toolchain supports it (TypeScript 5.2+
 * down-levels it, Node 24+ runs it); Node 20 does not.
 *
 * @example
 * const ref = await startReferenceService();
 * try {
 *   const shop = createShop(ref.env);
 *   await ref.deliverTo(createApp(shop));
 *   const { reference } = await ref.createTransaction({ merchantReference: 'order-1' });
 *   await ref.addFault({ type: 'duplicate', times: 4, reference });
 *   await ref.pay(reference);
 * } finally {
 *   await ref.close();
 * }
 *
 * @example
 * // A platform's accounts on one route, `/webhooks/epay/:account`: each signed with its own secret.
 * const ref = await startReferenceService({ merchants: [{ id: 'shop-a' }, { id: 'shop-b' }], path: '/webhooks/epay' });
 * await ref.deliverTo(platformApp);
 * const shopB = ref.account('shop-b'); // shopB.apiKey, shopB.webhookSecret, shopB.client
 * const { reference } = await shopB.createTransaction();
 * await shopB.pay(reference); // POST /webhooks/epay/shop-b, signed with shopB.webhookSecret
 */
export async function startReferenceService(options: StartReferenceServiceOptions = {}): Promise<TestReferenceService> {
  // Checked before any port is opened: a wrong option throws with nothing to close.
  const accountsAt = testAccounts(options);
  // The relay: the service needs its callback URL at start, the app usually exists only later.
  const relay = await startWebhookRelay();
  const accounts = accountsAt(relay.callbackUrl);
  let started: { service: ReferenceService; running: RunningServer | undefined };
  try {
    started = await startService(options, accounts);
  } catch (error) {
    await relay.close();
    throw error;
  }
  const ref = serviceHandle({ ...started, relay, accounts, path: options.path });
  if (options.deliverTo !== undefined) {
    try {
      await ref.deliverTo(options.deliverTo, { path: options.path });
    } catch (error) {
      await ref.close();
      throw error;
    }
  }
  return ref;
}

/**
 * The service for the sandbox merchants on a manual clock, moved to `startAt`, listening unless
 * told not to. Throws when the signature header is given twice, differently.
 */
async function startService(
  options: StartReferenceServiceOptions,
  accounts: readonly TestAccount[],
): Promise<{ service: ReferenceService; running: RunningServer | undefined }> {
  const header = options.signatureHeader;
  if (
    header !== undefined &&
    options.service?.signatureHeader !== undefined &&
    options.service.signatureHeader.toLowerCase() !== header.toLowerCase()
  ) {
    throw new TypeError(
      `[@payhook/testing] startReferenceService: signatureHeader is ${JSON.stringify(header)} but service.signatureHeader is ${JSON.stringify(options.service.signatureHeader)}; give it once, at the top.`,
    );
  }
  const service = createReferenceService({
    ...options.service,
    ...(header !== undefined && { signatureHeader: header }),
    clock: 'manual',
    allowHttpCallbacks: true,
    merchants: accounts.map((a) => ({
      id: a.id,
      name: a.name,
      apiKeys: [{ key: a.apiKey }],
      webhookSecret: a.webhookSecret,
      callbackUrl: a.callbackUrl,
    })),
  });
  if (options.startAt !== undefined) {
    const startAt = typeof options.startAt === 'number' ? options.startAt : options.startAt.getTime();
    if (!(startAt >= service.clock.now())) {
      throw new RangeError(
        '[@payhook/testing] startReferenceService: startAt must not be in the past (the virtual clock only moves forward).',
      );
    }
    await service.clock.advance(startAt - service.clock.now());
  }
  const running = options.listen !== false ? await service.listen({ port: 0, host: '127.0.0.1' }) : undefined;
  return { service, running };
}
