import { signatureHeaderName } from '@payhook/core/api';
import { callbackUrlProblem } from '../delivery/callback-url.js';
import { createDispatcher } from '../delivery/dispatcher.js';
import { createFaults } from '../delivery/faults.js';
import { createCursorCodec } from '../domain/cursor.js';
import { createIdempotencyStore } from '../domain/idempotency.js';
import {
  createMerchantRegistry,
  DEFAULT_MERCHANT,
  generateApiKey,
  generateWebhookSecret,
  type MerchantConfig,
  normalizeAddress,
} from '../domain/merchants.js';
import { createTransactionStore, toRecord } from '../domain/transactions.js';
import { applyTransition } from '../domain/transitions.js';
import { ApiError, failure } from '../http/messages.js';
import { createRateLimiter } from '../http/rate-limit.js';
import { listen } from '../http/server.js';
import { parsePageHost, publicUrlHost } from '../pages/page-guard.js';
import { createClock } from '../domain/clock.js';
import type { ServiceContext } from '../contract/context.js';
import { createRequestHandler } from './handle-request.js';
import type { ReferenceService, ReferenceServiceOptions } from '../contract/service-types.js';

/**
 * Create the reference payment service: the API of section 4, sandbox control, checkout page and
 * dashboard, in process.
 *
 * @example
 * const service = createReferenceService({ clock: 'manual', allowHttpCallbacks: true });
 * const { apiKey } = service.generated!;
 * const res = await service.fetch(new Request('http://localhost/v1/transactions', {
 *   headers: { authorization: `Bearer ${apiKey}` },
 * }));
 */
export function createReferenceService(options: ReferenceServiceOptions = {}): ReferenceService {
  const allowHttpCallbacks = options.allowHttpCallbacks ?? false;
  const { configs, generated } = merchantConfigs(options.merchants, allowHttpCallbacks);
  const pageHosts = [
    ...(options.pageHosts ?? []).map(parsePageHost),
    ...(options.publicUrl === undefined ? [] : [publicUrlHost(options.publicUrl)]),
  ];
  const merchants = createMerchantRegistry(configs);
  const clock = typeof options.clock === 'object' ? options.clock : createClock({ mode: options.clock ?? 'real' });
  const now = () => clock.now();
  const onError = options.onError ?? ((error: unknown) => console.error('[@payhook/reference]', error));
  const rate = { limit: options.rateLimit?.limit ?? 100, windowMs: options.rateLimit?.windowMs ?? 60_000 };
  const faults = createFaults();
  // Read out of `options` here: a closure over `options` would keep the merchants' plain API keys alive.
  const onChange = options.onChange;
  const changed = () => {
    try {
      onChange?.();
    } catch (error) {
      onError(error);
    }
  };
  const signatureHeader = headerOption(options.signatureHeader);
  const dispatcher = createDispatcher({
    clock,
    faults,
    allowHttpCallbacks,
    signatureHeader,
    onError,
    onAttempt: options.onDeliveryAttempt,
    onChange: changed,
  });
  const store = createTransactionStore(options.state?.transactions);
  if (options.state) dispatcher.restore(options.state.deliveries);

  const ctx: ServiceContext = {
    clock,
    merchants,
    transactions: {
      ...store,
      create(input, checkoutUrl) {
        const tx = store.create(input, checkoutUrl);
        changed();
        return tx;
      },
    },
    dispatcher,
    faults,
    idempotency: createIdempotencyStore({ windowMs: options.idempotencyWindowMs, now }),
    cursors: createCursorCodec({ secret: options.cursorSecret, lifetimeMs: options.cursorLifetimeMs, now }),
    limiter: createRateLimiter({ ...rate, now }),
    allowHttpCallbacks,
    publicUrl: options.publicUrl?.replace(/\/+$/, ''),
    pageHosts,
    // Passes `details` through whole: the checkout page's error codes (INVALID_OTP, …) reach the timeline.
    move(tx, action, details) {
      const moved = applyTransition(tx, action, clock.now(), details);
      if (!moved.ok) return moved;
      const merchant = merchants.get(tx.merchantId);
      if (moved.event && merchant) dispatcher.send(merchant, tx, moved.event);
      changed();
      return { ok: true };
    },
  };

  const handle = createRequestHandler(ctx, rate);

  const service: ReferenceService = {
    async fetch(request, info) {
      const remoteAddress = normalizeAddress(info?.remoteAddress ?? '127.0.0.1');
      try {
        return await handle(request, remoteAddress, info?.listener);
      } catch (error) {
        if (error instanceof ApiError) return failure(error.status, error.message, error.headers);
        onError(error);
        return failure(500, 'Internal error in the reference service: see its log, and report it if it repeats.');
      }
    },
    clock,
    merchants,
    get generated() {
      return generated;
    },
    deliveries: (filter) => dispatcher.list(filter),
    transactions: () => ctx.transactions.all().map(toRecord),
    snapshot: () => ({ transactions: ctx.transactions.all().reverse(), deliveries: dispatcher.list() }),
    listen: (opts) => listen(service, opts),
    close: () => clock.close(),
  };
  return service;
}

/** The merchants given, their callback URLs checked; none given: one made up, with the credentials it was given (`generated`). */
function merchantConfigs(
  given: MerchantConfig[] | undefined,
  allowHttpCallbacks: boolean,
): { configs: MerchantConfig[]; generated: ReferenceService['generated'] } {
  let generated: ReferenceService['generated'] = null;
  let configs = given;
  if (!configs || configs.length === 0) {
    generated = { apiKey: generateApiKey('sandbox'), webhookSecret: generateWebhookSecret() };
    configs = [{ ...DEFAULT_MERCHANT, apiKeys: [{ key: generated.apiKey }], webhookSecret: generated.webhookSecret }];
  }
  for (const m of configs) {
    const problem = m.callbackUrl === undefined ? null : callbackUrlProblem(m.callbackUrl, allowHttpCallbacks);
    if (problem) throw new TypeError(`[@payhook/reference] merchant ${m.id ?? ''} callbackUrl: ${problem}`);
  }
  return { configs, generated };
}

/** The `signatureHeader` option, lower case; a value that is not a header name is the caller's mistake, named as ours. */
function headerOption(name: unknown): string {
  try {
    return signatureHeaderName(name);
  } catch (error) {
    throw new TypeError((error as Error).message.replace('[@payhook/core]', '[@payhook/reference]'));
  }
}
