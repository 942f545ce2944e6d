/** The prefix of every message of the package. */
export const NAME = '[@payhook/store-postgres]';

/** The longest delay a Node timer takes (past it the timer fires at once), and the most Postgres's ms settings hold. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The error a failed store query throws: what failed, for which key, why, and what to do. An
 * error of the package itself passes through unchanged.
 *
 * @example
 * throw storeError('claim', key, cause, 'payhook_deliveries');
 */
export function storeError(what: string, key: string, cause: unknown, table: string): Error {
  if (cause instanceof Error && cause.message.startsWith(NAME)) return cause;
  const reason = cause instanceof Error ? cause.message : String(cause);
  const code = (cause as { code?: string } | null)?.code;
  const fix =
    code === '42P01'
      ? `The table ${table} does not exist: create it from the package's schema.sql, or leave createTable on.`
      : 'The receiver answers 503 so the service retries; check that Postgres is running and reachable at the configured URL (DATABASE_URL).';
  return new Error(`${NAME} could not ${what} "${key}" (${reason}). ${fix}`, { cause });
}

/**
 * `value` when it is a positive finite number, rounded up; else the package's RangeError naming
 * the option.
 *
 * @example
 * const lease = positiveMs(leaseMs, 'leaseMs');
 */
export function positiveMs(value: number, name: string, unit = 'milliseconds'): number {
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`${NAME} ${name} must be a positive number of ${unit}; got ${value}.`);
  }
  return Math.ceil(value);
}
