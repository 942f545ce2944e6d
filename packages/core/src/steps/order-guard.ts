import type { TransactionRecord } from '../protocol/api-schema.js';
import type { Plan } from '../contracts/handling.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { EVENTS_BEFORE, isPaymentEventName, type PaymentEventName } from '../protocol/payment-lifecycle.js';
import type { Log } from '../base/logger.js';
import type { Store } from '../storage/store-contract.js';
import type { Clock } from '../base/clock.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import { reportOf } from '../observing/outcome.js';
import { SETTLED } from '../protocol/outcomes.js';
import { judgeRecord } from './record-check.js';
import type { RecordClient } from '../contracts/handling.js';
import { whenHappened, type ServiceTimes } from './service-times.js';
import { eventFromRecord } from '../protocol/record-event.js';

export interface OrderGuardSettings {
  /** `hold`: answer 409 until the earlier events ran. `fetch`: ask the service for the record and run them first. */
  ordering: 'hold' | 'fetch';
  store: Store;
  dedupeKey: (event: PaymentEvent) => string;
  /** With `accounts`: an account's key of an event (the account's name before the event's own key). */
  accountKey: (event: PaymentEvent, account: string) => string;
  planFor: (name: string) => Plan;
  client: RecordClient | undefined;
  clock: Clock;
  /** How long done records are kept: an earlier event older than this may have run and been forgotten. */
  retentionMs: number;
  log: Log;
  /** Run a missing earlier event, as a reconcile does (no signature, the same claim), as the delivery's account's. */
  runEarlier: (event: PaymentEvent, record: TransactionRecord, a: GuardedAccount) => Promise<DeliveryReport>;
}

/** Whose event it is (a receiver with `accounts`): its keys, and the client that asks the service for its record. */
export interface GuardedAccount {
  account?: string;
  client?: RecordClient;
}

/**
 * How many times the guard holds one event back before it runs it anyway, logged at warn. The
 * service makes 5 attempts over about 15 minutes (0, 1, 3, 7, 15): a held event runs by its 4th.
 */
export const HOLDS_BEFORE_RUNNING = 3;

/** The report of an event held back, naming what it waits for (not one of reportOf's hand-copied fields). */
const held = (waitingFor: PaymentEventName[], error?: unknown): DeliveryReport => ({
  ...reportOf('held', error === undefined ? undefined : { error }),
  waitingFor,
});

const HOUR = 60 * 60 * 1000;

/**
 * The ordering guard, from the lifecycle table: an event runs only once the events that come
 * before it in the transaction's life (EVENTS_BEFORE) ran. The store's done records say which
 * ran, but they expire: an earlier event that happened before the store's retention (the service's
 * times say when) counts as run, whether it ran or was lost, and is neither waited for nor run
 * again. Only earlier events with handlers count: one nobody handles leaves no record to wait for.
 *
 * Returns the report that ends the delivery, or undefined when the event may run. `hold` answers
 * 409 `held`; `fetch` reads the service's record (this transaction's, in this mode, caught up with
 * the event) and runs the missing events first, in lifecycle order, within `budgetMs`. Whatever
 * asks the service to come back counts as a hold, and the event runs after HOLDS_BEFORE_RUNNING
 * of them: the service's attempts are few, and a refund never handled is worse than one handled
 * before its payment.
 */
export function createOrderGuard(s: OrderGuardSettings) {
  // A done record lives at least the retention from its event; the margin allows for the two clocks.
  const forgottenBefore = () => s.clock.now() - (s.retentionMs - Math.min(s.retentionMs / 10, HOUR));

  const keyOf = (event: PaymentEvent, a: GuardedAccount) => (a.account === undefined ? s.dedupeKey(event) : s.accountKey(event, a.account));

  async function missingBefore(event: PaymentEvent, a: GuardedAccount): Promise<PaymentEventName[]> {
    const missing: PaymentEventName[] = [];
    for (const name of EVENTS_BEFORE[event.event as PaymentEventName]) {
      if (s.planFor(name).handlers.length === 0) continue;
      const record = await s.store.get(keyOf({ ...event, event: name } as PaymentEvent, a));
      if (record?.state !== 'done') missing.push(name);
    }
    return missing;
  }

  /** Drop the events that happened before the store's memory: their records may be gone. */
  const recent = (missing: PaymentEventName[], times: Partial<Record<PaymentEventName, number>>) =>
    missing.filter((name) => !(times[name]! < forgottenBefore()));

  /** The service's record of the delivery's transaction (checked to be it, caught up) and when its events happened. */
  async function askService(
    event: PaymentEvent,
    missing: PaymentEventName[],
    client: RecordClient,
  ): Promise<{ record: TransactionRecord; known: ServiceTimes } | DeliveryReport> {
    let record: TransactionRecord;
    try {
      record = await client.transactions.retrieve(event.reference);
    } catch (error) {
      const status = (error as { status?: number } | null | undefined)?.status;
      return reportOf(status === 404 ? 'mismatch' : 'verify-unavailable', { error });
    }
    const refused = judgeRecord(event, record);
    if (refused) return refused;
    const known = await whenHappened(client, record, missing);
    return 'times' in known ? { record, known } : known;
  }

  /** `fetch`: the missing events that happened within the store's memory run from the record, oldest first. */
  async function fetchMissing(event: PaymentEvent, missing: PaymentEventName[], a: GuardedAccount): Promise<DeliveryReport | undefined> {
    const client = a.client ?? s.client;
    // Only with `accounts`: an account whose settings gave no client, and a receiver with none.
    if (!client) return reportOf('verify-unavailable', { error: new Error(NO_CLIENT(a.account)) });
    const asked = await askService(event, missing, client);
    if (!('record' in asked)) return asked;
    const { record, known } = asked;
    const left = recent(missing, known.times);
    for (let i = 0; i < left.length; i++) {
      // An event the service shows no time for is never run from the record: it may have run and been forgotten.
      if (known.times[left[i]!] === undefined) return held(left.slice(i), known.unknown(left[i]!));
      const r = await s.runEarlier(eventFromRecord(record, left[i]!, event.mode), record, a);
      // An earlier event counts as run once it settled (OUTCOMES): its handlers will not run again.
      if (!SETTLED.has(r.outcome)) return held(left.slice(i), r.error);
    }
    return undefined;
  }

  /** `hold`: with a client, the service's times drop what happened before the store's memory; otherwise wait. */
  async function holdMissing(event: PaymentEvent, missing: PaymentEventName[], a: GuardedAccount): Promise<DeliveryReport | undefined> {
    const client = a.client ?? s.client;
    const asked = client ? await askService(event, missing, client) : undefined;
    const left = asked && 'record' in asked ? recent(missing, asked.known.times) : missing;
    return left.length === 0 ? undefined : holdOrRun(event, held(left), a);
  }

  /** A refusal that asks the service to come back, counted in the store; past the bound the event runs. */
  async function holdOrRun(event: PaymentEvent, report: DeliveryReport, a: GuardedAccount): Promise<DeliveryReport | undefined> {
    if (report.outcome !== 'held' && report.outcome !== 'verify-unavailable') return report;
    let holds = 0;
    try {
      // A claim's attempt counts claims of its key, in the store every copy of the receiver shares.
      const key = `held:${keyOf(event, a)}`;
      const claim = await s.store.claim(key, 1000);
      if (claim.status !== 'claimed') return report;
      holds = claim.attempt;
      await s.store.release(key, claim.token);
    } catch {
      return report;
    }
    if (holds <= HOLDS_BEFORE_RUNNING) return report;
    const waiting = report.waitingFor?.join(', ') ?? 'the service to catch up';
    s.log.write(
      'warn',
      { reference: event.reference, event: event.event, holds: holds - 1, waitingFor: report.waitingFor },
      `[@payhook/core] ran ${event.event} of ${event.reference} after holding it ${holds - 1} times for ${waiting}: the service makes few attempts, so the guard stops waiting rather than lose the event. Check that the earlier events' handlers run, and the reconciler for lost deliveries.`,
    );
    return undefined;
  }

  async function guard(event: PaymentEvent, budgetMs: number, a: GuardedAccount): Promise<DeliveryReport | undefined> {
    let missing = await missingBefore(event, a);
    // Without the service, the event itself says when it was paid.
    if (typeof event.paidAt === 'string') missing = recent(missing, { 'payment.success': Date.parse(event.paidAt) });
    if (missing.length === 0) return undefined;
    if (s.ordering === 'hold') return holdMissing(event, missing, a);
    const fetching = fetchMissing(event, missing, a);
    const report = await (budgetMs === Infinity ? fetching : withinBudget(fetching, budgetMs, () => held(missing)));
    return report && holdOrRun(event, report, a);
  }

  /** Within the budget, or held: the earlier events started here go on and are done when the service retries. */
  function withinBudget<T>(work: Promise<T>, budgetMs: number, late: () => T): Promise<T> {
    return new Promise((resolve) => {
      const timer = s.clock.setTimeout(() => resolve(late()), budgetMs);
      void work.then((r) => {
        s.clock.clearTimeout(timer);
        resolve(r);
      });
    });
  }

  return (event: PaymentEvent, budgetMs: number, a: GuardedAccount = {}): Promise<DeliveryReport | undefined> | undefined => {
    if (!isPaymentEventName(event.event) || EVENTS_BEFORE[event.event].length === 0) return undefined;
    return guard(event, budgetMs, a).catch((error: unknown) => reportOf('store-unavailable', { error }));
  };
}

/** The guard of one receiver: a promise of the report that holds `event` back (none: it may run), or undefined when nothing need be awaited. */
export type OrderGuard = ReturnType<typeof createOrderGuard>;

const NO_CLIENT = (account: string | undefined) =>
  `[@payhook/core] ordering: 'fetch' asks the service for the record, but neither account ${account}'s settings from accounts.resolve nor the receiver have a client: return { secret, client: createClient({ apiKey }) } for it.`;
