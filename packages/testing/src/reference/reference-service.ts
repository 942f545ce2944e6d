import {
  createReferenceService,
  generateApiKey,
  generateWebhookSecret,
  type ReferenceService,
  type RunningServer,
} from '@payhook/reference';
import { serviceHandle } from './service-handle.js';
import type { StartReferenceServiceOptions, TestReferenceService } from './service-types.js';
import { startWebhookRelay } from './webhook-relay.js';

export type { MoveOptions, StartReferenceServiceOptions, TestReferenceService } from './service-types.js';

/**
 * Start the reference service for a test: a manual (virtual) clock, a sandbox merchant with a
 * generated key and secret, the API on 127.0.0.1 port 0, and a relay on another free port as the
 * callback URL, forwarding each webhook to the target you give (an app, a handler, a URL). Close
 * it with `close()` (in `finally` or `afterEach`). `await using ref = …` does the same where the
 * toolchain supports it (TypeScript 5.2+ down-levels it, Node 24+ runs it); Node 20 does not.
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
 */
export async function startReferenceService(options: StartReferenceServiceOptions = {}): Promise<TestReferenceService> {
  const apiKey = options.apiKey ?? generateApiKey('sandbox');
  const webhookSecret = options.webhookSecret ?? generateWebhookSecret();
  if (!apiKey.startsWith('sk_test_')) {
    throw new TypeError(
      '[@payhook/testing] startReferenceService: apiKey must be a sandbox key (sk_test_…), or leave it out to generate one.',
    );
  }

  // The relay: the service needs its callback URL at start, the app usually exists only later.
  const relay = await startWebhookRelay();
  let started: { service: ReferenceService; running: RunningServer | undefined };
  try {
    started = await startService(options, { apiKey, webhookSecret, callbackUrl: relay.callbackUrl });
  } catch (error) {
    await relay.close();
    throw error;
  }
  const ref = serviceHandle({ ...started, relay, apiKey, webhookSecret, path: options.path });
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
 * The service for one sandbox merchant on a manual clock, moved to `startAt`, listening unless
 * told not to. Throws when the signature header is given twice, differently.
 */
async function startService(
  options: StartReferenceServiceOptions,
  merchant: { apiKey: string; webhookSecret: string; callbackUrl: string },
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
  const { apiKey, webhookSecret, callbackUrl } = merchant;
  const service = createReferenceService({
    ...options.service,
    ...(header !== undefined && { signatureHeader: header }),
    clock: 'manual',
    allowHttpCallbacks: true,
    merchants: [{ id: 'test', name: 'Test shop', apiKeys: [{ key: apiKey }], webhookSecret, callbackUrl }],
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
