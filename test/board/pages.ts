// What the board's browser test reads off a page: the list's rows, a list that waits for the
// ledger's batched writes, axe-core's findings, and keyboard focus.
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { until } from '@payhook/test-support/wait';
import { BASE } from './example.js';

/** The list's rows as a person reads them: each cell's text by its column (the Order cell's order id and customer apart). */
export function rowsOf(
  page: Page,
): Promise<Array<{ id: string; reference: string; order: string; customer: string; amount: string; event: string; outcome: string }>> {
  return page.$$eval('#deliveries tbody tr[data-id]', (trs) =>
    (trs as HTMLTableRowElement[]).map((tr) => {
      const text = (selector: string) => tr.querySelector(selector)?.textContent ?? '';
      return {
        id: tr.getAttribute('data-id') ?? '',
        reference: text('td[data-label=Reference]'),
        order: text('td[data-label=Order] > :first-child'),
        customer: text('td[data-label=Order] .customer'),
        amount: text('td[data-label=Amount]'),
        event: text('td[data-label=Event]'),
        outcome: text('td[data-label=Outcome]'),
      };
    }),
  );
}

/**
 * Open the list with `query` until `ready` holds for its rows: a delivery reaches the ledger in a
 * batch after its answer, so the first look may come before it.
 */
export async function openList(
  page: Page,
  origin: string,
  query: Record<string, string>,
  ready: (rows: Awaited<ReturnType<typeof rowsOf>>) => boolean,
  what: string,
) {
  const url = `${origin}${BASE}/?${new URLSearchParams(query)}`;
  return until(
    async () => {
      await page.goto(url);
      const rows = await rowsOf(page);
      return ready(rows) && rows;
    },
    { timeoutMs: 10_000, intervalMs: 200, what: `${what} at ${url}` },
  );
}

/** The id of the delivery of `reference` whose outcome starts with `outcome`, once the ledger has it. */
export async function idOf(page: Page, origin: string, reference: string, outcome = 'processed'): Promise<string> {
  const has = (r: { outcome: string }) => r.outcome.startsWith(outcome);
  return (await openList(page, origin, { reference }, (rs) => rs.some(has), `its ${outcome} delivery`)).find(has)!.id;
}

/** Fill the list's filter form on a fresh list and submit it, as a person does; the rows it shows. */
export async function filterList(page: Page, origin: string, fields: Record<string, string>) {
  await page.goto(`${origin}${BASE}/`);
  for (const [name, value] of Object.entries(fields)) {
    const field = page.locator(`form.filters [name=${name}]`);
    if ((await field.evaluate((e) => e.tagName)) === 'SELECT') await field.selectOption(value);
    else await field.fill(value);
  }
  await follow(page, () => page.click('form.filters button[type=submit]'), /\?/);
  return rowsOf(page);
}

/** Click (or press) and wait for the page it leads to; if none comes, fail with what the page says (a refusal's text). */
export async function follow(page: Page, act: () => Promise<void>, url: RegExp): Promise<void> {
  try {
    await Promise.all([page.waitForURL(url, { timeout: 8_000 }), act()]);
  } catch (error) {
    const said = await page.textContent('body').catch(() => '');
    throw new Error(`expected to land on ${url} from ${page.url()}, which says: ${said?.trim().slice(0, 300)}`, { cause: error });
  }
}

/**
 * axe-core's violations of impact serious or critical on the open page. The source is evaluated
 * through the DevTools protocol, which the board's Content-Security-Policy (no inline script)
 * does not govern; the page itself is not changed.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const found = await page.evaluate(async () => {
    const results = await (window as unknown as { axe: typeof axe }).axe.run(document);
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? '',
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.targets.join(', ')})`);
}

/** Press Tab until the focused element's text is `text` (at most 40 times); fails if it never is. */
export async function tabTo(page: Page, text: string): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
    if (focused === text) return;
    seen.push(focused);
  }
  throw new Error(`Tab never reached "${text}"; focus went through: ${JSON.stringify(seen)}`);
}

/** The delivery page's facts, `dt` to `dd` text. */
export async function factsOf(page: Page): Promise<Record<string, string>> {
  const pairs = await page.$$eval('#facts dt', (dts) => dts.map((dt) => [dt.textContent ?? '', dt.nextElementSibling?.textContent ?? '']));
  return Object.fromEntries(pairs);
}

/** Wait until the list's chart image has loaded (it is served by the board, under its policy). */
export const chartLoaded = (page: Page) =>
  page.waitForFunction(() => {
    const img = document.getElementById('chart') as HTMLImageElement | null;
    return img?.complete === true && img.naturalWidth > 0;
  });
