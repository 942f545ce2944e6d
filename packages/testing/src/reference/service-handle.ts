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
import type { TestAccount } from './accounts.js';
import { routeOf, type WebhookRelay } from './webhook-relay.js';

/** What `startReferenceService` started, for the handles to drive and to close. */
export interface StartedService {
  service: ReferenceService;
  /** The API's server; undefined with `listen: false`. */
  running: RunningServer | undefined;
  relay: WebhookRelay;
  /** The merchant accounts, in the order given: the first is the handle `serviceHandle` returns. */
  accounts: readonly TestAccount[];
  /** The webhook route on an app target (the `path` option). */
  path: string | undefined;
}

/** What every account's handle shares: the service, its clock, the target and `close`. */
type Shared = Pick<
  TestReferenceService,
  'service' | 'url' | 'clock' | 'deliverTo' | 'advance' | 'runRetrySchedule' | 'account' | 'close' | typeof Symbol.asyncDispose
>;

let counter = 0;

/** The typed controls a test drives a started reference service with (`TestReferenceService`), one handle per account. */
export function serviceHandle({ service, running, relay, accounts, path }: StartedService): TestReferenceService {
  const url = running?.url ?? 'http://reference.invalid';
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (running) await running.close();
    else service.close();
    await relay.close();
  };
  const handles = new Map<string, TestReferenceService>();
  const shared: Shared = {
    service,
    url,
    clock: service.clock,
    async deliverTo(next, targetOptions) {
      const options = targetOptions ?? { path };
      await relay.setTarget(await resolveTarget(next, options), routeOf(next, options));
    },
    advance: (ms) => service.clock.advance(ms),
    runRetrySchedule: () => service.clock.advance(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) + DELIVERY_TIMEOUT_MS),
    account(id) {
      const handle = handles.get(id);
      if (handle) return handle;
      throw new Error(
        `[@payhook/testing] account(${JSON.stringify(id)}): no such merchant account; the service was started with ${[...handles.keys()].join(', ')}. Name it in startReferenceService({ merchants: [{ id: ${JSON.stringify(id)} }] }).`,
      );
    },
    close,
    [Symbol.asyncDispose]: close,
  };
  for (const account of accounts) handles.set(account.id, accountHandle(shared, running, account));
  return handles.get(accounts[0]!.id)!;
}

/** The controls that act for one account: its key for the API and sandbox control, its deliveries. */
function accountHandle(shared: Shared, running: RunningServer | undefined, account: TestAccount): TestReferenceService {
  const { service, url } = shared;
  const { id, apiKey, webhookSecret } = account;
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

  return {
    ...shared,
    accountId: id,
    apiKey,
    webhookSecret,
    callbackUrl: account.callbackUrl,
    env: { PAYHOOK_BASE_URL: url, PAYHOOK_API_KEY: apiKey, PAYHOOK_WEBHOOK_SECRET: webhookSecret },
    client,
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
    deliveries: (filter = {}) =>
      service
        .deliveries({ merchantId: id, mode: 'sandbox', reference: filter.reference })
        .filter((d) => filter.event === undefined || d.event === filter.event),
    fetch(fetchPath, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${apiKey}`);
      return service.fetch(new Request(new URL(fetchPath, url), { ...init, headers }));
    },
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
