import { perMinute, REFUSALS_PER_MINUTE } from '../base/per-minute.js';
import { lazyLedgerWriter } from '../ledger/lazy-ledger-writer.js';
import type { TransactionRecord } from '../protocol/api-schema.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { handoffPlan, queuedKey } from '../routing/handoff.js';
import { needsClient, resolveOptions, type ReceiverOptions } from '../settings/options.js';
import type { GuardedAccount } from '../steps/order-guard.js';
import type { RunSettings } from '../steps/run-settings.js';
import { verifyStep } from '../steps/verify-step.js';
import { SHORTEST_RETENTION_MS } from '../storage/store-contract.js';
import { dispatchEvent, type Pipeline } from './run-delivery.js';
import { lazyDiagnosis, lazyOrderGuard } from './lazy-steps.js';
import { createRunCore } from './run-core.js';
import { createAccountBook, type Account } from '../accounts/account-book.js';
import { accountKeyPrefix } from '../accounts/account-name.js';

/** What a name nobody knows is verified as: an account whose one secret nobody has. */
function decoyAccount(): Account {
  const secrets = [crypto.randomUUID()];
  return { name: '', secrets, verify: verifyStep(secrets), client: undefined };
}

/**
 * Build a receiver's pipeline from its options: the verifier and the diagnosis of refusals, the
 * router and reporter (shared with queue workers), the settings of claim-and-run (a handoff's
 * when events go to a queue), the ledger writer, and the ordering guard. The diagnosis, the ledger
 * writer and the guard are loaded when first needed (./lazy-steps.ts, issue 54).
 */
export function createPipeline(options: ReceiverOptions) {
  const o = resolveOptions(options);
  let decoy: Account | undefined;
  if (o.verifyBeforeHandling && !o.accounts) needsClient(o.client, { verify: true });
  const verify = verifyStep(o.secrets);
  const core = createRunCore({ ...o, user: 'receiver', clientPerAccount: o.accounts !== undefined });
  // With a handoff the web process only enqueues, under a key of its own; an enqueue that outlives
  // the budget gets 503, never a 202 that could lose the event.
  const plan = o.handoff && handoffPlan(o.handoff, () => o.clock.now());
  const keyOf = plan ? queuedKey : (key: string) => key;
  const settings: RunSettings = plan
    ? { ...core.settings, planFor: () => plan, dedupeKey: (e) => keyOf(o.dedupeKey(e)), afterBudget: 'retry', doneOutcome: 'queued' }
    : core.settings;
  const writer = o.store.ledger && lazyLedgerWriter(o.store.ledger, o.log, () => o.clock.now());
  // Late outcomes (after a 202) reach the ledger too, as an update of the delivery's record.
  if (writer) settings.report = (r) => (r.late && writer.late(r), core.report(r));
  const p: Pipeline = {
    o,
    verify,
    diagnose: lazyDiagnosis({ secrets: o.secrets, mode: o.mode, verify, now: () => o.clock.now() }),
    settings,
    watch: core.watch,
    report: core.report,
    writer,
    mayLogRefusal: perMinute(
      REFUSALS_PER_MINUTE,
      () => o.clock.now(),
      (skipped, since) => o.log.write('warn', { skipped }, skippedRefusals(skipped, since)),
    ),
    forcedKey: (event, forcedBy, account) =>
      keyOf(`forced:${forcedBy}:${account === undefined ? '' : accountKeyPrefix(account)}${o.dedupeKey(event)}`),
    accountKey: (event, account) => keyOf(accountKeyPrefix(account) + o.dedupeKey(event)),
    accounts: o.accounts && {
      book: createAccountBook(o.accounts, o.clock, verifyStep, (message, fields) => o.log.write('warn', fields, message)),
      // Made on first use: a Worker forbids random values at module scope, where receivers are often made.
      decoy: () => (decoy ??= decoyAccount()),
    },
    // The guard runs a missing earlier event as a reconcile would, through the same steps (loaded at its first use).
    guard:
      o.ordering &&
      lazyOrderGuard({
        ...settings,
        ordering: o.ordering,
        store: o.store,
        client: o.client,
        log: o.log,
        retentionMs: o.retentionMs ?? o.store.retentionMs ?? SHORTEST_RETENTION_MS,
        accountKey: (event: PaymentEvent, account: string) => p.accountKey(event, account),
        runEarlier: (event: PaymentEvent, record: TransactionRecord, a: GuardedAccount) =>
          dispatchEvent(p, event, 'reconcile', record, a.account, a.client),
      }),
  };
  return { p, registration: core.registration };
}

const skippedRefusals = (skipped: number, since: number) =>
  `[@payhook/core] ${skipped} more refused deliveries (401, 405, 408, 413, unreadable uploads) were not logged in the minute from ${new Date(since).toISOString()}: at most ${REFUSALS_PER_MINUTE} a minute are, so that a flood of them costs your logs little. Metrics count every one.`;
