import { createHash } from 'node:crypto';
import type { QueryConfig } from 'pg';

/**
 * A Postgres name for `text`: `payhook_` and the first `hex` hex digits of its SHA-256, the same
 * for the same text in every process (a notification channel, a prepared statement).
 *
 * @example
 * hashedName('payhook_deliveries', 16); // 'payhook_' + 16 hex
 */
export const hashedName = (text: string, hex: number): string => `payhook_${createHash('sha256').update(text).digest('hex').slice(0, hex)}`;

/**
 * Most distinct texts one store names. The store's own are about ten; the rest is room for the
 * statements of effects and of pg-boss that go through `store.statement()`. A text past the limit
 * (SQL built with its values inside, say) runs unnamed, so no connection keeps an unbounded set of
 * prepared statements.
 */
const MOST_NAMES = 64;

/**
 * A pg query config for a statement, named after a hash of its text when `prepare` is on. pg then
 * parses it once per connection and Postgres plans it once (a generic plan after five runs), where
 * an unnamed statement is parsed and planned on every run: for the store's claim, done record and
 * pg-boss's job insert that was more than half of the server's time per delivery.
 *
 * @example
 * const statement = statements(true);
 * await pool.query({ ...statement(SQL.get, [key]), query_timeout: 2_000 });
 */
export function statements(prepare: boolean): (text: string, values?: unknown[]) => QueryConfig {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < MOST_NAMES) {
      name = hashedName(text, 24);
      names.set(text, name);
    }
    return name;
  };
  return prepare ? (text, values) => ({ name: nameOf(text), text, values }) : (text, values) => ({ text, values });
}
