import type { Mode } from '@payhook/core';
import { MAX_LIST_RANGE_MS, type ListPage, type TransactionRecord } from '@payhook/core/api';
import { PaymentServiceError } from './errors.js';

/** The record as the client returns it: `mode` always set (from the API key when the service leaves it out). */
export type Transaction = TransactionRecord & {
  /** `live` or `sandbox`. */
  mode: Mode;
};

/** A list page as the client returns it (the service's `ListPage`, each record with its `mode`). */
export type TransactionPage = ListPage & {
  /** This page's transactions, newest first. */
  data: Transaction[];
  /** Pass it as `cursor`, with the same filters, for the next page; null on the last. */
  nextCursor: string | null;
  /** Whether another page follows. */
  hasMore: boolean;
};

/** List filters as values; dates may be `Date` objects or ISO strings. The page size is the service's (10). */
export interface ListFilters {
  /** From this date on, inclusive; a date-only value starts at 00:00 UTC. */
  from?: Date | string;
  /** To this date, inclusive; a date-only value covers the whole day. */
  to?: Date | string;
  /** An ISO currency code: `ETB`, `USD`. */
  currency?: string;
  /** Only transactions in this status. */
  status?: TransactionRecord['status'];
  /** The `nextCursor` of the previous page, with the same filters. */
  cursor?: string;
}

/** Empty pages in a row that still say `hasMore` before a walk gives up instead of looping. */
export const MAX_EMPTY_PAGES = 5;

/**
 * Every transaction of the filters: page after page while `hasMore` is true and `nextCursor` is
 * set, the filters sent again with each cursor, and window after window when the range is longer
 * than the service's 90 days. A cursor given twice, or too many empty pages that claim more, end
 * the walk with a `PaymentServiceError` rather than an endless loop.
 */
export async function* walkPages(
  list: (filters: ListFilters) => Promise<TransactionPage>,
  filters: Omit<ListFilters, 'cursor'>,
  where: () => string,
): AsyncGenerator<Transaction> {
  for (const window of windows(filters)) {
    let cursor: string | undefined;
    const given = new Set<string>();
    let empty = 0;
    for (;;) {
      const page = await list({ ...filters, ...window, cursor });
      yield* page.data;
      if (!page.hasMore || page.nextCursor === null) break;
      empty = page.data.length === 0 ? empty + 1 : 0;
      const stuck = given.has(page.nextCursor)
        ? `it gave the cursor ${page.nextCursor} a second time`
        : empty >= MAX_EMPTY_PAGES
          ? `it answered ${empty} empty pages in a row that all said hasMore`
          : undefined;
      if (stuck) {
        throw new PaymentServiceError(
          200,
          `stopped walking the list: ${stuck}, so following it would never end; list the range again later, or report this to the service`,
          { method: 'GET', url: where(), sent: true },
        );
      }
      given.add(page.nextCursor);
      cursor = page.nextCursor;
    }
  }
}

/**
 * Split a range longer than the service's 90 days into windows, newest first (the list's own
 * order), that neither overlap nor leave a gap.
 */
export function windows(filters: Pick<ListFilters, 'from' | 'to'>): { from?: string; to?: string }[] {
  if (filters.from === undefined || filters.to === undefined) {
    return [{ from: iso(filters.from), to: iso(filters.to) }];
  }
  const from = new Date(filters.from).getTime();
  const to = new Date(filters.to).getTime();
  if (!(to - from > MAX_LIST_RANGE_MS)) return [{ from: iso(filters.from), to: iso(filters.to) }];
  const out: { from: string; to: string }[] = [];
  for (let end = to; end >= from; end -= MAX_LIST_RANGE_MS + 1) {
    out.push({ from: new Date(Math.max(from, end - MAX_LIST_RANGE_MS)).toISOString(), to: new Date(end).toISOString() });
  }
  return out;
}

const iso = (d: Date | string | undefined) => (d === undefined ? undefined : d instanceof Date ? d.toISOString() : d);
