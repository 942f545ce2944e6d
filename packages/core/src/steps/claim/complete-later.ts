import { andThen, attempt } from '../../base/maybe-async.js';
import type { Outcome } from '../../storage/store-contract.js';
import type { RunSettings } from '../run-settings.js';
import { reportOf } from '../../observing/outcome.js';
import type { DeliveryFields } from '../../contracts/delivery.js';

/**
 * The handlers ran but the done record could not be written (the store is overloaded or briefly
 * down). Keep the claim alive and try again in the background: a copy arriving meanwhile gets 409
 * and, when the service retries it, finds the event done instead of running it a second time.
 */
export function completeLater(s: RunSettings, key: string, token: string, outcome: Outcome, fields: DeliveryFields) {
  let tries = 0;
  const late = (error: unknown) => s.report(reportOf(outcome === 'ok' ? s.doneOutcome : 'rejected', { ...fields, late: true, error }));
  const retry = () => {
    tries += 1;
    // complete is idempotent for its token, so a first complete that landed but went unanswered is fine.
    void andThen(
      attempt<boolean | { error: unknown }>(
        () => s.ops.complete(key, token, s.doneRecord[outcome]),
        (error) => ({ error }),
      ),
      (held) => {
        if (typeof held === 'object') {
          if (tries >= 8) return void late(held.error);
          keepAndRetry();
        } else if (!held) {
          late(new Error(`[@payhook/core] the claim on ${key} was lost before its done record could be written; the event may run again.`));
        }
      },
    );
  };
  // Extend the claim first and retry well inside the lease, so it cannot lapse between tries and let a copy run.
  const keepAndRetry = () => {
    void attempt(
      () => s.ops.extend(key, token, s.leaseMs),
      () => false,
    );
    s.clock.setTimeout(retry, Math.min(s.leaseMs / 3, 250 * 2 ** tries));
  };
  keepAndRetry();
}
