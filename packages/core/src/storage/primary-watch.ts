import type { StoreLog } from './store-log.js';

/** Who answers a store's connection: a server's identity, and what to say about it when it changes. */
export interface PrimaryIdentity {
  /** Equal for the same primary, different for another (Redis `run_id`, Postgres system id and timeline). */
  id: string;
  /** Said in the log when a switch is noticed, e.g. `run_id 3f… → 9a…, promoted from a replica`. */
  describe(before: PrimaryIdentity): string;
}

/** How far before the last answer of the old primary the recovery window starts: its replicas' lag, with room for clocks. */
export const SWITCH_MARGIN_MS = 5 * 60_000;

/** What `primaryWatch` gives a store: it is told when calls succeed and whom it connected to. */
export interface PrimaryWatch {
  /** The primary was there until now: a store call just succeeded, or its connection just closed. */
  ok(): void;
  /** The identity the store reads on (re)connecting; logs at error when it is another primary's. */
  seen(identity: PrimaryIdentity): void;
}

/**
 * Notice a store talking to a different primary than before (a failover, a restart, a DNS flip to
 * a restored copy): what the old one acknowledged in its last moments may be missing on the new
 * one. The log names the window to reconcile, from a margin before the old primary's last answer
 * to now, and the command that runs it.
 *
 * @example
 * const primary = primaryWatch('[@payhook/store-redis] Redis', log);
 * primary.seen({ id: runId, describe: (before) => `run_id ${before.id} → ${runId}` });
 */
export function primaryWatch(what: string, log: StoreLog, now: () => number = Date.now): PrimaryWatch {
  let current: PrimaryIdentity | undefined;
  let lastOk = 0;
  return {
    ok() {
      lastOk = now();
    },
    seen(identity) {
      const before = current;
      current = identity;
      if (!before || before.id === identity.id) return;
      const at = now();
      const since = new Date((lastOk || at) - SWITCH_MARGIN_MS).toISOString();
      const until = new Date(at).toISOString();
      log.error(
        `${what} is now a different primary (${identity.describe(before)}), noticed at ${until}. ` +
          'Done records and transactional effects the old primary acknowledged just before it went may be missing here, ' +
          'so an event answered 200 may never have run to the end. Recover them with a reconcile over the window before the switch: ' +
          `payhook reconcile --since ${since} --until ${until} (or reconciler.run({ from: '${since}', to: '${until}' })); ` +
          'events whose claim survived without their done record are held until their lease ends, so run it again after leaseMs.',
        { since, until },
      );
    },
  };
}
