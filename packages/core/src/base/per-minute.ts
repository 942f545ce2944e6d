const MINUTE = 60_000;

/**
 * Refused deliveries (a webhook request whose signature did not check out) logged, and recorded in
 * the ledger, per minute of the receiver's clock: anyone can send them, so past this a flood costs
 * neither the logs nor the store more. Metrics count every one.
 */
export const REFUSALS_PER_MINUTE = 600;

/**
 * A share per minute of a clock, for work that anyone can ask for (a refused delivery's log line,
 * ledger record or diagnosis): the first `limit` calls of each minute get it (true), the rest are
 * counted, and a minute's count is handed to `skipped` at the first call after that minute.
 *
 * @example
 * const mayLog = perMinute(600, () => clock.now(), (n) => log.write('warn', { skipped: n }, `${n} not logged`));
 * if (mayLog()) log.write('warn', fields, message);
 */
export function perMinute(limit: number, now: () => number, skipped?: (count: number, minuteStart: number) => void): () => boolean {
  let minute = Number.NaN;
  let taken = 0;
  let missed = 0;
  return () => {
    const m = Math.floor(now() / MINUTE);
    if (m !== minute) {
      if (missed > 0) skipped?.(missed, minute * MINUTE);
      minute = m;
      taken = 0;
      missed = 0;
    }
    if (taken < limit) {
      taken += 1;
      return true;
    }
    missed += 1;
    return false;
  };
}
