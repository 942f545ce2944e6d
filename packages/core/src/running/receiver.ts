import type { ReceiverResult, RawDelivery } from '../contracts/delivery.js';
import type { Receiver, ReceiverAdapter } from '../contracts/receiving.js';
import type { createReplay, ReplaySteps } from '../ledger/replay.js';
import type { ReceiverOptions } from '../settings/options.js';
import { holdOpen } from '../steps/hold-open.js';
import { accountNamed, isAccountName } from '../accounts/account-name.js';
import { readRequest } from '../steps/read-request.js';
import { createPipeline } from './pipeline.js';
import { crashed, deliver, dispatchEvent, finish, runEvent, traceOf, unbudgetedRun, webhookRun, type Run } from './run-delivery.js';
import { isPromise } from '../base/maybe-async.js';
import { ADAPTER } from '../base/shared-keys.js';

/**
 * Create the receiver: verify on raw bytes, parse, deduplicate through the store, route to typed
 * handlers, and answer within the budget whatever the handlers do. The steps are ./run-delivery.ts
 * and ../steps/, one each; this only wires them.
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET! })
 *   .on('payment.success', async (event, ctx) => {
 *     await orders.markPaid(event.merchantReference, ctx.reference);
 *   });
 * export const POST = (request: Request) => receiver.handle(request);
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const { p, registration } = createPipeline(options);
  const { o, writer } = p;
  const from = o.accounts?.from;
  const accountOf = from && ((url: string | undefined, header: (name: string) => unknown) => accountNamed(from, url, header));
  const handoff = o.handoff;
  const steps: ReplaySteps = {
    signed: (delivery, trace) => deliver(p, delivery, unbudgetedRun(trace.receivedAt, 'replay', trace)),
    unsigned: (event, trace, record) =>
      runEvent(p, event, null, { ...unbudgetedRun(trace.receivedAt, 'replay', trace, record), account: trace.account }),
    refused: (r, trace) => finish(p, r, unbudgetedRun(trace.receivedAt, 'replay', trace)),
    trace: (replayOf, forced) => ({ ...traceOf(p, o.clock.now(), 'replay')!, replayOf, forced }),
    client: o.client,
  };
  // Loaded at the first replay (issue 54).
  let replays: Promise<ReturnType<typeof createReplay>> | undefined;
  const ledger = o.store.ledger;
  const replaysOf =
    writer && ledger && (() => (replays ??= import('../ledger/replay.js').then((m) => m.createReplay(ledger, writer, steps))));
  const receiver: Receiver = {
    ...registration(
      () => receiver,
      () => handoff && noHandlersHere(),
    ),
    async handle(request, { waitUntil, framework } = {}) {
      let hold: ReturnType<typeof holdOpen> | undefined;
      let r: ReceiverResult;
      try {
        const delivery = await readRequest(request, o, framework);
        if (accountOf) delivery.account = accountOf(request.url, (name) => request.headers.get(name) ?? undefined);
        // As on the Node bridge, which reads the body before `processDelivery`: durations run from the body's arrival.
        hold = waitUntil && !handoff ? holdOpen(waitUntil) : undefined;
        r = await processDelivery(delivery, hold?.handOver);
        // The ledger writes after the answer: on a platform that freezes once it has answered, under its waitUntil.
        if (writer) holdLedger(waitUntil, writer.idle());
      } catch (error) {
        r = crashed(p, error, undefined);
      } finally {
        hold?.release();
      }
      // A copy: the shared headers are frozen, and @hono/node-server 1.x's Response adds Content-Length to the object it is given.
      return new Response(r.body, { status: r.status, headers: { ...r.headers } });
    },
    dispatch: async (event, opts = {}) =>
      dispatchEvent(p, event, opts.source ?? 'reconcile', opts.record, dispatchedAccount(opts.account, o.accounts !== undefined)),
    async replay(id, replayOptions) {
      if (!replaysOf) throw new Error(NO_LEDGER);
      return (await replaysOf()).replay(id, replayOptions);
    },
    idle: () => (writer ? writer.idle() : Promise.resolve()),
    forgetAccount(account) {
      if (!p.accounts) throw new TypeError('[@payhook/core] forgetAccount is for a receiver with `accounts`; this one has one `secret`.');
      p.accounts.book.forget(account);
    },
    store: o.store,
    dedupeKey: o.dedupeKey,
  };
  /**
   * Not an async function: with the memory store and synchronous handlers the answer is a value,
   * and an `await` of it would cost every delivery a promise and a turn of the microtask queue.
   */
  function processDelivery(delivery: RawDelivery, waitUntil?: (work: Promise<unknown>) => void): Promise<ReceiverResult> {
    let run: Run;
    try {
      run = webhookRun(p, o.clock.now(), waitUntil);
    } catch (error) {
      // A clock that throws rejects, as before: there is no run to answer it with.
      return Promise.reject(error);
    }
    const crash = (error: unknown) => crashed(p, error, run);
    try {
      const r = deliver(p, delivery, run);
      return isPromise(r) ? Promise.resolve(r).then(undefined, crash) : Promise.resolve(r);
    } catch (error) {
      // Through a promise, so that a crash report that throws rejects, as the async function did.
      return Promise.resolve(error).then(crash);
    }
  }
  const adapter: ReceiverAdapter = {
    process: (delivery) => processDelivery(delivery),
    fail: (error) => crashed(p, error, undefined),
    maxBodyBytes: o.maxBodyBytes,
    bodyDeadline: { ms: o.bodyTimeoutMs, clock: o.clock },
    signatureHeader: o.signatureHeader,
    accountOf,
    log: (level, fields, message) => o.log.write(level, fields, message),
  };
  Object.defineProperty(receiver, ADAPTER, { value: adapter });
  return receiver;
}

/** The account a dispatch names: required with `accounts` (its events' keys start with it), refused without. */
function dispatchedAccount(account: string | undefined, accounts: boolean): string | undefined {
  if (accounts ? isAccountName(account) : account === undefined) return account;
  throw new TypeError(
    accounts
      ? `[@payhook/core] this receiver serves many accounts: dispatch(event, { account }) needs the account's name (1 to 64 letters, digits, _ or -); got ${JSON.stringify(account)}.`
      : '[@payhook/core] dispatch was given an account, but this receiver has one secret, not `accounts`: leave account out.',
  );
}

/** The ledger's writes under the platform's hook; a hook that throws (called outside its request) holds nothing, as in holdOpen. */
function holdLedger(waitUntil: ((work: Promise<unknown>) => void) | undefined, idle: Promise<void>): void {
  try {
    waitUntil?.(idle);
  } catch {}
}

const NO_LEDGER =
  '[@payhook/core] replay needs a ledger: create the store with a `ledger` option (memoryStore, redisStore or postgresStore({ ledger: true })).';

function noHandlersHere(): never {
  throw new TypeError(
    '[@payhook/core] this receiver hands events to a queue (handoff): register handlers on the worker, createWorker(...).on(...), not on the receiver.',
  );
}
