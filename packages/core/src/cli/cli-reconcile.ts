import { escapeText } from '../base/escape-text.js';
import { errorMessage } from '../base/errors.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import type { Reconciler } from '../reconcile/reconciler.js';

/** What the app's module may export for `payhook reconcile`. */
export interface ReconcileExports {
  /** The reconciler `createReconciler()` made (over the receiver the module exports). */
  reconciler?: unknown;
  /** On a receiver with `accounts`: the reconciler of one account (each account's API key is its own). */
  reconcilerFor?: unknown;
}

const isReconciler = (x: unknown): x is Reconciler => typeof (x as Reconciler | undefined)?.run === 'function';

/** The reconciler for `account` (or the app's one), or a message saying what to export. */
export async function reconcilerOf(mod: ReconcileExports, file: string, account: string | undefined): Promise<Reconciler | string> {
  if (account !== undefined) {
    if (typeof mod.reconcilerFor !== 'function')
      return `${file} exports no reconcilerFor: for --account, export \`reconcilerFor(account)\` returning createReconciler({ client, receiver, account }) with that account's API client.`;
    const found: unknown = await (mod.reconcilerFor as (account: string) => unknown)(account);
    return isReconciler(found) ? found : `${file}'s reconcilerFor(${JSON.stringify(account)}) gave no reconciler.`;
  }
  if (isReconciler(mod.reconciler)) return mod.reconciler;
  return `${file} exports no reconciler: export the one createReconciler({ client, receiver }) made, as \`export const reconciler = …\`.`;
}

/**
 * `payhook reconcile --since <t> --until <t>`: walk the service's transactions of the window and
 * run every event the store has no done record of, as after a failover that forgot some. Prints
 * one line per event it ran, held or failed, then the counts; exit code 1 when any is left.
 */
export async function reconcileWindow(reconciler: Reconciler, from: number, to: number, json: boolean | undefined): Promise<number> {
  const result = await reconciler.run({ from: new Date(from), to: new Date(to) });
  const line = (kind: string, r: DeliveryReport) =>
    json
      ? escapeText(
          JSON.stringify({
            kind,
            reference: r.reference,
            event: r.event,
            outcome: r.outcome,
            status: r.status,
            error: r.error === undefined ? undefined : errorMessage(r.error),
          }),
          true,
        )
      : escapeText(
          `${kind} ${r.reference} ${r.event}: ${r.outcome} (${r.status})${r.error === undefined ? '' : ` - ${errorMessage(r.error)}`}`,
        );
  for (const r of result.recovered) console.log(line('ran', r));
  for (const r of result.inProgress) console.log(line('held', r));
  for (const r of result.failed) console.log(line('failed', r));
  const left = result.inProgress.length + result.failed.length;
  const counts = { scanned: result.scanned, ran: result.recovered.length, held: result.inProgress.length, failed: result.failed.length };
  console.log(
    json
      ? JSON.stringify(counts)
      : `${counts.scanned} transactions from ${new Date(from).toISOString()} to ${new Date(to).toISOString()}: ${counts.ran} events ran, ${counts.held} held by a running delivery, ${counts.failed} failed${left ? '; run it again to take those' : ''}`,
  );
  return left === 0 ? 0 : 1;
}
