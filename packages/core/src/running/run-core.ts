import { publishReport, timersOutliveRequests } from '#platform';
import { createDeadlines, ownTimers } from '../base/deadlines.js';
import { createRouter } from '../routing/event-router.js';
import type { EventHandler, HandlerOptions } from '../contracts/handling.js';
import type { PaymentEventName } from '../protocol/payment-lifecycle.js';
import { needsClient, type resolveRunOptions } from '../settings/options.js';
import type { RunSettings } from '../steps/run-settings.js';
import { warnOfFrozenWork, warnOfMemoryStore, type MemoryStoreUser } from '../storage/memory-store-warning.js';
import { createLoopWatch } from '../observing/loop-watch.js';
import type { ErrorHandler } from '../contracts/delivery.js';
import { createReporter } from '../observing/report.js';
import { storeOps } from '../storage/store-contract.js';

export interface RunCoreOptions extends ReturnType<typeof resolveRunOptions> {
  afterBudget: RunSettings['afterBudget'];
  onInProgress: RunSettings['onInProgress'];
  /** For the fix a refused signature's log names; a worker has none to refuse. */
  signatureHeader: string;
  mode: string | undefined;
  /** What is being built; the memory-store warning compares receivers with receivers, workers with workers. */
  user: MemoryStoreUser;
  /** With `accounts`, each account may bring its own client: `{ verify: true }` needs none on the receiver. */
  clientPerAccount?: boolean;
}

/**
 * What a receiver and a queue worker build alike from their options: the typed router (timed by
 * the loop watch), the reporter and its `onError` handlers, and the settings of claim-and-run.
 */
export function createRunCore(o: RunCoreOptions) {
  warnOfMemoryStore(o.store, o.log, o.user);
  o.store.useLogger?.(o.log);
  const watch = createLoopWatch(o.clock, (message, blocked) => o.log.write('warn', blocked, message));
  const { router, planFor, run } = createRouter(watch);
  const errorHandlers: ErrorHandler[] = [];
  const report = createReporter({ ...o, errorHandlers, publish: publishReport });
  // An event sent to the dead letters stays done (rejected) longer than its open dead letters are
  // kept, so that re-posting their stored bytes answers `duplicate` whatever expired first.
  const failedTtl = o.store.ledger?.failedDoneTtlMs;
  const failedTtlMs = failedTtl === undefined ? o.retentionMs : Math.max(o.retentionMs ?? 0, failedTtl);
  const doneRecord = { ok: { outcome: 'ok', ttlMs: o.retentionMs }, rejected: { outcome: 'rejected', ttlMs: failedTtlMs } } as const;
  const deadlines = (timersOutliveRequests ? createDeadlines : ownTimers)(o.clock);
  const acceptedUnguarded = () => warnOfFrozenWork(o.log);
  const settings: RunSettings = {
    ...o,
    ops: storeOps(o.store),
    ...(o.store.watch && { watch: o.store.watch.bind(o.store) }),
    planFor,
    run,
    deadlines,
    report,
    doneRecord,
    doneOutcome: 'processed',
    acceptedUnguarded,
  };
  /**
   * `on`, `onAny` and `onError` for `self` (a receiver or a queue runner), each returning it;
   * `allowed` runs before a handler is registered (a receiver with a handoff refuses them).
   */
  const registration = <T>(self: () => T, allowed: () => void = () => {}): Registration<T> => ({
    on(event, handler, handlerOptions) {
      allowed();
      if (!o.clientPerAccount) needsClient(o.client, handlerOptions);
      router.on(event, handler, handlerOptions);
      return self();
    },
    onAny(handler, handlerOptions) {
      allowed();
      if (!o.clientPerAccount) needsClient(o.client, handlerOptions);
      router.onAny(handler, handlerOptions);
      return self();
    },
    onError(handler) {
      errorHandlers.push(handler);
      return self();
    },
  });
  return { watch, router, errorHandlers, report, settings, registration };
}

/** The registering methods a receiver and a queue runner share. */
export interface Registration<T> {
  on<E extends PaymentEventName>(event: E | readonly E[], handler: EventHandler<E>, options?: HandlerOptions): T;
  onAny(handler: EventHandler, options?: HandlerOptions): T;
  onError(handler: ErrorHandler): T;
}
