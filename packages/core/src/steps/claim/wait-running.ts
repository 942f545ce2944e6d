import { andThen, attempt } from '../../base/maybe-async.js';
import type { StoreWatch } from '../../storage/key-watches.js';
import type { ClaimResult } from '../../storage/store-contract.js';
import type { RunSettings } from '../run-settings.js';

/** The first pause before claiming again; each next one doubles, up to the last. */
const FIRST_PAUSE_MS = 25;
const LAST_PAUSE_MS = 400;
const KEEP_ALIVE = { keepAlive: true } as const;

/**
 * A copy that found its event running (`onInProgress: 'wait'`): wait until the running delivery
 * is done (the copy is then a duplicate), gave the claim up (the copy runs the event itself) or
 * `end` would pass, whichever comes first. Resolves with the last claim's result; a store that
 * fails meanwhile leaves it `in-progress`, so the copy answers 409.
 *
 * A store that can watch a key is claimed again only when it says the key changed, or when the
 * running delivery's lease ends: three claims for a copy whatever the handler's length. Any other
 * store is claimed again after growing pauses.
 */
export function waitForRunning(s: RunSettings, key: string, end: number, stopped: () => boolean, first: ClaimResult): Promise<ClaimResult> {
  const watch = s.watch;
  // No time to wait (a reconcile): answer with what the first claim found, watching nothing.
  if (s.clock.now() + FIRST_PAUSE_MS > end) return Promise.resolve(first);
  if (watch === undefined) return pollRunning(s, key, end, stopped, first);
  return watch(key).then(
    (w) => watchRunning(s, w, key, end, stopped, first),
    // The store could not listen (its server is away): fall back to asking.
    () => pollRunning(s, key, end, stopped, first),
  );
}

/** Claim again, or `fallback` if the store fails. Off the hot path: only a copy that waits claims again. */
function claimAgain(s: RunSettings, key: string, fallback: ClaimResult, then: (c: ClaimResult) => void): void {
  void andThen(
    attempt(
      () => s.ops.claim(key, s.leaseMs),
      () => fallback,
    ),
    then,
  );
}

function pollRunning(s: RunSettings, key: string, end: number, stopped: () => boolean, first: ClaimResult): Promise<ClaimResult> {
  return new Promise((resolve) => {
    let pause = FIRST_PAUSE_MS;
    const again = () => (stopped() ? resolve(first) : claimAgain(s, key, first, next));
    const next = (c: ClaimResult) => {
      if (c.status !== 'in-progress' || s.clock.now() + pause > end) return resolve(c);
      // Kept alive: in a plain script nothing else may hold the process open for this copy's answer.
      s.clock.setTimeout(again, pause, KEEP_ALIVE);
      pause = Math.min(pause * 2, LAST_PAUSE_MS);
    };
    next(first);
  });
}

/**
 * Watching: claim once more now that the watch is on (the key may have changed before it was),
 * then again each time the store says the key changed, or the lease it reported ends (its holder
 * may have died), until the claim is no longer in progress or `end` comes.
 */
function watchRunning(
  s: RunSettings,
  w: StoreWatch,
  key: string,
  end: number,
  stopped: () => boolean,
  first: ClaimResult,
): Promise<ClaimResult> {
  return new Promise((resolve) => {
    let last = first;
    let timer: unknown;
    let settled = false;
    const finish = (c: ClaimResult) => {
      if (settled) return;
      settled = true;
      w.stop();
      if (timer !== undefined) s.clock.clearTimeout(timer);
      resolve(c);
    };
    const again = () => {
      if (timer !== undefined) s.clock.clearTimeout(timer);
      timer = undefined;
      if (settled) return;
      if (stopped()) return finish(last);
      claimAgain(s, key, last, next);
    };
    const next = (c: ClaimResult) => {
      last = c;
      if (settled) return;
      if (c.status !== 'in-progress' || stopped()) return finish(c);
      const now = s.clock.now();
      if (now >= end) return finish(c);
      // Wake at the budget's end (answer with what is known), or when the reported lease ends.
      const at = Math.min(end, c.leaseExpiresAt);
      timer = s.clock.setTimeout(() => (at >= end ? finish(last) : again()), Math.max(1, at - now), KEEP_ALIVE);
      void w.changed().then(again);
    };
    claimAgain(s, key, first, next);
  });
}
