import { attempt, isPromise } from '../base/maybe-async.js';
import type { ClaimResult } from '../storage/store.js';
import type { RunSettings } from './run-settings.js';

/** The first pause before claiming again; each next one doubles, up to the last. */
const FIRST_PAUSE_MS = 25;
const LAST_PAUSE_MS = 400;
const KEEP_ALIVE = { keepAlive: true } as const;

/**
 * A copy that found its event running (`onInProgress: 'wait'`): claim again after growing pauses
 * until the running delivery is done (the copy is then a duplicate), gave the claim up (the copy
 * runs the event itself) or `end` would pass, whichever comes first. Resolves with the last claim's
 * result; a store that fails meanwhile leaves it `in-progress`, so the copy answers 409.
 */
export function waitForRunning(s: RunSettings, key: string, end: number, stopped: () => boolean, first: ClaimResult): Promise<ClaimResult> {
  return new Promise((resolve) => {
    let pause = FIRST_PAUSE_MS;
    const again = () => {
      if (stopped()) return resolve(first);
      const claim = attempt(
        () => s.ops.claim(key, s.leaseMs),
        () => first,
      );
      if (isPromise(claim)) void claim.then(next);
      else next(claim);
    };
    const next = (c: ClaimResult) => {
      if (c.status !== 'in-progress' || s.clock.now() + pause > end) return resolve(c);
      // Kept alive: in a plain script nothing else may hold the process open for this copy's answer.
      s.clock.setTimeout(again, pause, KEEP_ALIVE);
      pause = Math.min(pause * 2, LAST_PAUSE_MS);
    };
    next(first);
  });
}
