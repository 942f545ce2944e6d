import type { LoopWatch } from '../contracts/handling.js';
import type { createDiagnosis } from '../observing/diagnose.js';
import type { LedgerWriter } from '../ledger/ledger-writer.js';
import type { resolveOptions } from '../settings/options.js';
import type { OrderGuard } from '../steps/order-guard.js';
import type { RunSettings } from '../steps/run-settings.js';
import type { verifyStep } from '../steps/verify-step.js';
import { isPromise, type Awaitable } from '../base/maybe-async.js';
import type { DeliveryReport, DeliverySource, RawDelivery, ReceiverResult, Trace } from '../contracts/delivery.js';
import type { HandleOptions } from '../contracts/receiving.js';
import { answerOf, reportOf } from '../observing/outcome.js';
import type { TransactionRecord } from '../protocol/api-schema.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import type { RawBody, VerifyResult } from '../protocol/signature.js';
import { claimAndRun } from '../steps/claim-and-run.js';
import { intake, isReport } from '../steps/intake.js';
import { Malformed, parseEvent } from '../steps/parse.js';
import type { RunInput } from '../steps/run-settings.js';
import { ledgerId } from '../storage/ledger.js';
import type { Account, AccountBook, NoAccount } from '../accounts/account-book.js';
import { isAccountName } from '../accounts/account-name.js';
import type { RecordClient } from '../contracts/handling.js';

/**
 * What every delivery's steps share, made once by `createReceiver`: the options, the steps built
 * from them, and where answers are reported and recorded.
 */
export interface Pipeline {
  readonly o: ReturnType<typeof resolveOptions>;
  readonly verify: ReturnType<typeof verifyStep>;
  readonly diagnose: ReturnType<typeof createDiagnosis>;
  readonly settings: RunSettings;
  readonly watch: LoopWatch;
  readonly report: (r: DeliveryReport, quiet?: boolean) => DeliveryReport;
  readonly writer: LedgerWriter | undefined;
  /** Whether one more refusal may be logged this minute (anyone can send them). */
  readonly mayLogRefusal: () => boolean;
  /** The key a forced replay claims, so that a done event runs again, once per replay. */
  readonly forcedKey: (event: PaymentEvent, forcedBy: string, account: string | undefined) => string;
  /** The ordering guard, when `ordering` is set: a report holds the event back; undefined lets it run. */
  readonly guard: OrderGuard | undefined;
  /** With `accounts`: the accounts known, and an account with a secret nobody has, for names nobody knows. */
  readonly accounts: { book: AccountBook; decoy: () => Account } | undefined;
  /** The key an account's event claims: the account's name before the event's own key. */
  readonly accountKey: (event: PaymentEvent, account: string) => string;
}

/** One delivery's way through the pipeline: when it arrived, its budget, where it came from, its ledger record. */
export interface Run {
  startedAt: number;
  budgetMs: number;
  source: DeliverySource;
  waitUntil?: HandleOptions['waitUntil'];
  record?: TransactionRecord;
  trace?: Trace;
  /** The merchant account, once its secret verified the delivery (or a reconcile or replay named it). */
  account?: string;
  /** The account's own client, for `{ verify: true }`. */
  client?: RecordClient;
}

/** A run that answers the service: the receiver's budget, from the body's arrival. */
export const webhookRun = (p: Pipeline, startedAt: number, waitUntil?: Run['waitUntil']): Run => ({
  startedAt,
  budgetMs: p.o.budgetMs,
  source: 'webhook',
  waitUntil,
  trace: traceOf(p, startedAt, 'webhook'),
  // Present from the start, so that setting them for an account keeps the object's shape.
  account: undefined,
  client: undefined,
});

/** A run with no deadline (a replay, a reconcile): it waits for the handlers, and no loop watch counts its answer. */
export const unbudgetedRun = (startedAt: number, source: DeliverySource, trace: Trace | undefined, record?: TransactionRecord): Run => ({
  startedAt,
  budgetMs: Infinity,
  source,
  record,
  trace,
});

/** The ledger's record of a delivery, when the store keeps a ledger. */
export const traceOf = (p: Pipeline, startedAt: number, source: Trace['source']): Trace | undefined =>
  p.writer && { id: ledgerId(startedAt), receivedAt: startedAt, source };

const MISMATCH = Object.freeze({ ok: false, reason: 'mismatch' }) as Exclude<VerifyResult, { ok: true }>;

/** Step 1, for signed bytes: method and size, then the signature. */
export function deliver(p: Pipeline, delivery: RawDelivery, run: Run): Awaitable<ReceiverResult> {
  const body = intake(delivery, p.o.maxBodyBytes);
  if (isReport(body)) return finish(p, body, run, true);
  if (run.trace) {
    run.trace.body = body;
    run.trace.signatureHeader = delivery.signature;
  }
  if (p.accounts !== undefined) return deliverForAccount(p, p.accounts, delivery, body, run);
  // Branches rather than andThen here and in claimEvent: every delivery passes both, and the
  // helper costs 7-10% of a delivery's instructions (BENCHMARKS.md, issue 32).
  const v = p.verify(body, delivery.signature);
  return isPromise(v) ? v.then((r) => checked(r, p, delivery, run)) : checked(v, p, delivery, run);
}

/**
 * Step 1b, with `accounts`: the account the request names, looked up, and the body verified with
 * its secrets only. A name nobody knows is verified with a secret nobody has, so that it costs and
 * answers what a wrong signature does; a lookup that failed is a 503, and the service retries.
 */
function deliverForAccount(
  p: Pipeline,
  accounts: NonNullable<Pipeline['accounts']>,
  delivery: RawDelivery,
  body: RawBody,
  run: Run,
): Awaitable<ReceiverResult> {
  const found = accounts.book.lookup(delivery.account);
  if (!isPromise(found)) return verifyForAccount(p, accounts, found, delivery, body, run);
  // The lookup spent some of the budget: what is left goes to the claim and the handlers.
  return found.then((a) => {
    run.budgetMs -= p.o.clock.now() - run.startedAt;
    return verifyForAccount(p, accounts, a, delivery, body, run);
  });
}

function verifyForAccount(
  p: Pipeline,
  accounts: NonNullable<Pipeline['accounts']>,
  a: Account | NoAccount,
  delivery: RawDelivery,
  body: RawBody,
  run: Run,
): Awaitable<ReceiverResult> {
  // Anyone can make a lookup fail (a flood of made-up names spends the minute's lookups): its log lines are rationed as refusals.
  if ('error' in a) return finish(p, reportOf('account-unavailable', { error: a.error }), run, true);
  // A name nobody knows takes the same steps as a known account, with a secret nobody has: same work, same answer.
  const unknown = 'unknown' in a;
  const account = unknown ? accounts.decoy() : a;
  const v = account.verify(body, delivery.signature);
  // The run is this delivery's own: set in place, not copied (every platform delivery passes here).
  run.account = unknown ? undefined : account.name;
  run.client = account.client;
  return isPromise(v) ? v.then((r) => checked(r, p, delivery, run, account, unknown)) : checked(v, p, delivery, run, account, unknown);
}

/** Step 2: a refusal with its diagnosis in the log (the answer is the bare 401 whatever it finds), or the parsed event. */
function checked(
  v: VerifyResult,
  p: Pipeline,
  delivery: RawDelivery,
  run: Run,
  account?: Account,
  unknown = false,
): Awaitable<ReceiverResult> {
  const body = delivery.body as RawBody;
  if (run.trace) run.trace.verified = v.ok && !unknown;
  if (!v.ok || unknown) {
    const { signature: header, signatureHeaderSeen } = delivery;
    const named = unknown
      ? { reason: 'unknown-account' as const, accountNamed: isAccountName(delivery.account) ? delivery.account : undefined }
      : undefined;
    const verdict = v.ok ? MISMATCH : v;
    return p.diagnose(verdict, { body, header, signatureHeaderSeen, account }).then(
      (d) => finish(p, { ...d, ...named, ...reportOf('unauthorized'), account: run.account }, run, true),
      () => finish(p, { ...named, ...reportOf('unauthorized'), account: run.account }, run, true),
    );
  }
  const event = parseEvent(body);
  return isPromise(event) ? event.then((e) => parsed(p, e, v.secretIndex, run)) : parsed(p, event, v.secretIndex, run);
}

function parsed(p: Pipeline, event: PaymentEvent | Malformed, secretIndex: number | null, run: Run): Awaitable<ReceiverResult> {
  return event instanceof Malformed ? finish(p, event.report(), run) : runEvent(p, event, secretIndex, run);
}

/** Step 3: the ordering guard, given half the budget for the earlier events; then the claim with what is left. */
export function runEvent(p: Pipeline, event: PaymentEvent, secretIndex: number | null, run: Run): Awaitable<ReceiverResult> {
  const held = p.guard?.(event, run.budgetMs / 2, run);
  if (held === undefined) return claimEvent(p, event, secretIndex, run);
  return held.then((r) =>
    r
      ? finish(
          p,
          { ...r, account: run.account, reference: event.reference, event: event.event, source: run.trace?.source ?? run.source },
          run,
        )
      : claimEvent(p, event, secretIndex, { ...run, budgetMs: run.budgetMs - (p.o.clock.now() - run.startedAt) }),
  );
}

/** Step 4: claim the event's key, run its handlers, record the outcome (../steps/claim-and-run.ts). */
function claimEvent(p: Pipeline, event: PaymentEvent, secretIndex: number | null, run: Run): Awaitable<ReceiverResult> {
  const { startedAt, budgetMs, waitUntil, trace, record } = run;
  const source = trace?.source ?? run.source;
  const { account, client } = run;
  const key = trace?.forced ? p.forcedKey(event, trace.id, account) : account !== undefined ? p.accountKey(event, account) : undefined;
  const input: RunInput = { secretIndex, source, budgetMs, startedAt, waitUntil, record, key, deliveryId: trace?.id, account, client };
  const done = claimAndRun(p.settings, event, input);
  return isPromise(done) ? done.then((r) => finish(p, r, run)) : finish(p, done, run);
}

/** The last step of every delivery: time it, record it in the ledger, report it, and make the answer. */
export function finish(p: Pipeline, r: DeliveryReport, run: Run, refusal = false): ReceiverResult {
  // Only answers to the service count for the loop watch; a reconcile or a replay has no deadline.
  const blocked = run.budgetMs !== Infinity ? p.watch.answered() : undefined;
  if (blocked) r.loopBlocked = blocked;
  r.durationMs = p.o.clock.now() - run.startedAt;
  if (run.trace) {
    r.deliveryId = run.trace.id;
    p.writer!.answered(run.trace, r);
  }
  // Only a webhook's refusals are rationed: a replay's were asked for by whoever runs it.
  return answerOf(p.report(r, refusal && run.source === 'webhook' && !p.mayLogRefusal()));
}

/**
 * Whatever a step throws (a bug, or an input no step foresaw) ends in a bare 500 that is logged:
 * never an unhandled rejection that stops the process, never internal text in the answer.
 */
export function crashed(p: Pipeline, error: unknown, run: Run | undefined): ReceiverResult {
  try {
    return run ? finish(p, reportOf('failed', { error }), run) : answerOf(p.report(reportOf('failed', { error })));
  } catch {
    return answerOf(reportOf('failed'));
  }
}

/** An event that needs no signature check (recovered by a reconcile, or run first by the ordering guard). */
export async function dispatchEvent(
  p: Pipeline,
  event: PaymentEvent,
  source: DeliverySource,
  record: TransactionRecord | undefined,
  account?: string,
  client?: RecordClient,
): Promise<DeliveryReport> {
  const startedAt = p.o.clock.now();
  const trace = traceOf(p, startedAt, source);
  // A recovered event has no signed bytes: its JSON is what a retry of its dead letter runs again.
  if (trace) trace.body = JSON.stringify(event);
  const r = await runEvent(p, event, null, { ...unbudgetedRun(startedAt, source, trace, record), account, client });
  return r.report;
}
