import { createClient } from '@payhook/client';
import type { TransactionRecord } from '@payhook/core/api';
import {
  DELIVERY_TIMEOUT_MS,
  RETRY_DELAYS_MS,
  type Action,
  type FaultRule,
  type ReferenceService,
  type RunningServer,
} from '@payhook/reference';
import { resolveTarget } from '../targets/resolve-target.js';
import type { MoveOptions, TestReferenceService } from './service-types.js';
import type { WebhookRelay } from './webhook-relay.js';

/** What `startReferenceService` started, for the handle to drive and to close. */
export interface StartedService {
  service: ReferenceService;
  /** The API's server; undefined with `listen: false`. */
  running: RunningServer | undefined;
  relay: WebhookRelay;
  apiKey: string;
  webhookSecret: string;
  /** The webhook route on an app target (the `path` option). */
  path: string | undefined;
}

let counter = 0;

/** The typed controls a test drives a started reference service with (`TestReferenceService`). */
export function serviceHandle({ service, running, relay, apiKey, webhookSecret, path }: StartedService): TestReferenceService {
  const url = running?.url ?? 'http://reference.invalid';
  const inProcessFetch = (input: RequestInfo | URL, init?: RequestInit) => service.fetch(new Request(input, init));
  const client = createClient({ apiKey, baseUrl: url, fetch: running ? undefined : (inProcessFetch as typeof fetch) });
  const call = sandboxCall(service, url, apiKey);

  async function move(reference: string, action: Action, moveOptions: MoveOptions = {}): Promise<TransactionRecord> {
    const body = moveOptions.paymentMethod ? { paymentMethod: moveOptions.paymentMethod } : undefined;
    const record = await call<TransactionRecord>('POST', `/_sandbox/transactions/${encodeURIComponent(reference)}/${action}`, body);
    // advance(0) fires nothing new but waits for the deliveries in flight to be answered.
    if (moveOptions.settle !== false) await service.clock.advance(0);
    return record;
  }

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (running) await running.close();
    else service.close();
    await relay.close();
  };

  return {
    service,
    url,
    apiKey,
    webhookSecret,
    callbackUrl: relay.callbackUrl,
    env: { PAYHOOK_BASE_URL: url, PAYHOOK_API_KEY: apiKey, PAYHOOK_WEBHOOK_SECRET: webhookSecret },
    client,
    clock: service.clock,
    async deliverTo(next, targetOptions) {
      await relay.setTarget(await resolveTarget(next, targetOptions ?? { path }));
    },
    async createTransaction(input = {}) {
      counter += 1;
      const merchantReference = input.merchantReference ?? `order-${process.pid}-${counter}`;
      const result = await client.transactions.initialize({
        amount: '100.00',
        currencyCode: 'ETB',
        customerPhone: '0911234567',
        ...input,
        merchantReference,
      });
      return { ...result, merchantReference };
    },
    move,
    open: (reference, o) => move(reference, 'open', o),
    pay: (reference, o) => move(reference, 'pay', o),
    fail: (reference, o) => move(reference, 'fail', o),
    cancel: (reference, o) => move(reference, 'cancel', o),
    refund: (reference, o) => move(reference, 'refund', o),
    completeRefund: (reference, o) => move(reference, 'complete-refund', o),
    reverse: (reference, o) => move(reference, 'reverse', o),
    addFault: (fault) => call<FaultRule>('POST', '/_sandbox/faults', fault),
    faults: () => call<FaultRule[]>('GET', '/_sandbox/faults'),
    async clearFaults() {
      await call('DELETE', '/_sandbox/faults');
    },
    advance: (ms) => service.clock.advance(ms),
    runRetrySchedule: () => service.clock.advance(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) + DELIVERY_TIMEOUT_MS),
    deliveries: (filter = {}) =>
      service
        .deliveries({ merchantId: 'test', mode: 'sandbox', reference: filter.reference })
        .filter((d) => filter.event === undefined || d.event === filter.event),
    fetch(fetchPath, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${apiKey}`);
      return service.fetch(new Request(new URL(fetchPath, url), { ...init, headers }));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A sandbox-control request, answered with the bare result (an error envelope on failure, nothing on 204). */
function sandboxCall(service: ReferenceService, url: string, apiKey: string) {
  return async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await service.fetch(
      new Request(new URL(path, url), {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const message = (json as { data?: { message?: unknown } } | undefined)?.data?.message;
      throw new Error(
        `[@payhook/testing] ${method} ${path} failed (${res.status}): ${typeof message === 'string' ? message : text || `HTTP ${res.status}`}`,
      );
    }
    return json as T;
  };
}
