import { bodyIs, errorIs, initialize, initializeBody, referenceOf, said, shown, statusIs, type Check } from './contract.js';
import type { Diff } from './shapes.js';
import { LIST_PAGE, PROVIDER_ITEMS, PROVIDERS } from './spec.js';

/** go-sdk transactions.go `PageSize` / README: "cursor-paginated at a fixed 10 per page". */
const PAGE_SIZE = 10;
/** Transactions the paging check makes: one more than a page, so the walk has at least two. */
const MADE = PAGE_SIZE + 1;
/** The walk gives up after this many pages (a busy sandbox may hold other pending transactions today). */
const MAX_PAGES = 30;

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** A list query the interface says is a 400 (section 7, list). */
const badList = (name: string, query: string): Check => ({
  name,
  async run({ wire }) {
    const a = await wire.send('GET', `/v1/transactions?${query}`);
    return { detail: `${query} → ${a.status}`, diffs: errorIs(a, 400) };
  },
});

type Row = { reference?: unknown; status?: unknown; currencyCode?: unknown };
type Page = { data?: Row[]; nextCursor?: unknown; hasMore?: unknown };

const paging: Check = {
  name: 'list: paging to the end (nextCursor, hasMore, no duplicates)',
  async run(ctx) {
    const made = await Promise.all(Array.from({ length: MADE }, () => initialize(ctx, initializeBody(ctx))));
    const references = made.map(referenceOf);
    // The SDKs send date-only from/to (go-sdk types.go ListParams); yesterday to tomorrow covers any clock skew.
    const filters = `status=pending&currency=ETB&from=${day(-1)}&to=${day(1)}`;
    const diffs: Diff[] = [];
    const seen = new Map<string, number>();
    const sizes: number[] = [];
    const cursors = new Set<string>();
    let cursor: string | null = null;
    let ended = false;
    while (sizes.length < MAX_PAGES) {
      const a = await ctx.wire.send('GET', `/v1/transactions?${filters}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      const at = `page ${sizes.length + 1}`;
      const shape = [...statusIs(a, '2xx'), ...bodyIs(a, LIST_PAGE)].map((d) => ({ ...d, at: `${at} ${d.at}` }));
      if (shape.length > 0) return { detail: said(a), diffs: shape };
      const page = a.json as Page;
      const rows = page.data!;
      sizes.push(rows.length);
      for (const [i, row] of rows.entries()) {
        const reference = shown(row.reference);
        if (seen.has(reference))
          diffs.push({
            at: `${at} data[${i}]`,
            expected: 'a reference not seen on an earlier page',
            got: `${reference} again (page ${seen.get(reference)})`,
          });
        seen.set(reference, sizes.length);
        if (row.status !== 'pending' || row.currencyCode !== 'ETB') {
          diffs.push({
            at: `${at} data[${i}]`,
            expected: 'a row matching status=pending&currency=ETB',
            got: `status ${shown(row.status)}, currencyCode ${shown(row.currencyCode)}`,
          });
        }
      }
      if (rows.length > PAGE_SIZE)
        diffs.push({ at: `${at} data`, expected: `at most ${PAGE_SIZE} rows (go-sdk PageSize)`, got: `${rows.length} rows` });
      if ((page.nextCursor === null) === page.hasMore)
        diffs.push({
          at: `${at} hasMore`,
          expected: `${page.nextCursor !== null} (nextCursor is ${page.nextCursor === null ? 'null' : 'set'})`,
          got: String(page.hasMore),
        });
      if (page.nextCursor === null || page.hasMore === false) {
        ended = true;
        break;
      }
      if (rows.length < PAGE_SIZE)
        diffs.push({ at: `${at} data`, expected: `${PAGE_SIZE} rows on a page that is not the last`, got: `${rows.length} rows` });
      cursor = String(page.nextCursor);
      if (cursors.has(cursor)) {
        diffs.push({ at: `${at} nextCursor`, expected: 'a cursor not given before', got: 'a cursor repeated: the walk would never end' });
        break;
      }
      cursors.add(cursor);
      if (diffs.length > 20) break;
    }
    if (!ended && !diffs.some((d) => d.at.endsWith('nextCursor'))) {
      diffs.push({
        at: 'walk',
        expected: `the last page (nextCursor null) within ${MAX_PAGES} pages`,
        got: `hasMore still true after ${sizes.length} pages`,
      });
    }
    if (ended) {
      const missing = references.filter((r) => !seen.has(r));
      if (missing.length > 0)
        diffs.push({
          at: 'walk',
          expected: `all ${MADE} transactions made for it`,
          got: `${missing.length} missing, such as ${missing[0]}`,
        });
      if (sizes.length < 2) diffs.push({ at: 'walk', expected: `at least 2 pages for ${seen.size} rows`, got: `${sizes.length} page` });
    }
    return { detail: `${MADE} made; ${sizes.length} pages (${sizes.join(', ')}), ${seen.size} rows${ended ? ', ended' : ''}`, diffs };
  },
};

export const LIST_CHECKS: Check[] = [
  {
    name: 'list → 2xx {data: Transaction[], nextCursor, hasMore}',
    async run({ wire }) {
      const a = await wire.send('GET', '/v1/transactions');
      return {
        detail: `${said(a)} (${(a.json as Page | undefined)?.data?.length ?? 0} rows)`,
        diffs: [...statusIs(a, '2xx'), ...bodyIs(a, LIST_PAGE)],
      };
    },
  },
  paging,
  badList('list: from after to → 400', 'from=2025-03-10&to=2025-03-01'),
  badList('list: range over 90 days → 400', 'from=2025-01-01&to=2025-06-01'),
  badList('list: bad currency → 400', 'currency=EURO'),
  badList('list: unknown status → 400', 'status=paid_maybe'),
  badList('list: malformed cursor → 400', 'cursor=not-a-cursor'),
  {
    name: 'providers/list → 2xx {data: ProviderItem[]}',
    async run({ wire }) {
      const a = await wire.send('GET', '/v1/payment-providers/list');
      return {
        detail: `${said(a)} (${(a.json as { data?: unknown[] } | undefined)?.data?.length ?? 0} providers)`,
        diffs: [...statusIs(a, '2xx'), ...bodyIs(a, PROVIDER_ITEMS)],
      };
    },
  },
  {
    name: 'providers → 2xx {data: Provider[]}',
    async run({ wire }) {
      const a = await wire.send('GET', '/v1/payment-providers');
      return {
        detail: `${said(a)} (${(a.json as { data?: unknown[] } | undefined)?.data?.length ?? 0} providers)`,
        diffs: [...statusIs(a, '2xx'), ...bodyIs(a, PROVIDERS)],
      };
    },
  },
];
