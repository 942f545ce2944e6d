import type { LedgerEntry, LedgerQuery } from '@payhook/core';
import { escapeHtml } from '@payhook/core/api';
import { SECURITY_HEADERS } from '../base/guard.js';
import { toneOf } from './outcome.js';

const MINUTE = 60_000;
/** The most records one ledger query returns (a page of 1,000): the chart counts at most these. */
const MAX_LEDGER_PAGE = 1000;
/** The chart's span: the last hour, a bar a minute. */
const MINUTES = 60;
const TONES = [
  { tone: 'good', fill: '#2e8b57', label: 'settled (processed, queued, duplicate, ignored)' },
  { tone: 'warn', fill: '#d18f00', label: 'answered, not settled (accepted, held, in progress)' },
  { tone: 'bad', fill: '#b3261e', label: 'refused, failed or dead letter' },
] as const;

/** Deliveries of the last hour, a count per minute and per tone of outcome (the answer's, or its late outcome). */
export function perMinute(entries: readonly LedgerEntry[], now: number): Array<Record<string, number>> {
  const end = Math.floor(now / MINUTE) * MINUTE + MINUTE;
  const bars = Array.from({ length: MINUTES }, () => ({ good: 0, warn: 0, bad: 0 }) as Record<string, number>);
  for (const e of entries) {
    const i = MINUTES - 1 - Math.floor((end - 1 - e.receivedAt) / MINUTE);
    const tone = toneOf(e.late?.outcome ?? e.outcome) || 'warn';
    if (i >= 0 && i < MINUTES) bars[i]![tone]! += 1;
  }
  return bars;
}

/** Below the bars: the time axis's labels, then the legend. */
const LEGEND = 22;
const HEIGHT_BELOW = 38;
/** A tick every ten minutes. */
const TICK_EVERY = 10;

/**
 * The time axis: a tick and its time (HH:MM, UTC as the list shows times) at the start of each
 * bar that begins on a tenth minute, the last one saying UTC.
 */
export function timeAxis(now: number, W: number, H: number): string {
  const end = Math.floor(now / MINUTE) * MINUTE + MINUTE;
  const bw = W / MINUTES;
  const ticks: Array<{ x: number; label: string }> = [];
  for (let i = 0; i < MINUTES; i++) {
    const start = end - (MINUTES - i) * MINUTE;
    if ((start / MINUTE) % TICK_EVERY === 0) ticks.push({ x: i * bw, label: new Date(start).toISOString().slice(11, 16) });
  }
  return ticks
    .map(({ x, label }, i) => {
      const text = i === ticks.length - 1 ? `${label} UTC` : label;
      // Kept inside the image at either edge.
      const anchor = x < 15 ? 'start' : x > W - 30 ? 'end' : 'middle';
      return `<line x1="${x.toFixed(1)}" y1="${H}" x2="${x.toFixed(1)}" y2="${H + 4}" stroke="#999"/><text x="${x.toFixed(1)}" y="${H + 14}" font-size="10" font-family="sans-serif" fill="#333" text-anchor="${anchor}">${text}</text>`;
    })
    .join('');
}

/**
 * The chart as an SVG image (an <img> on the list page, so the list answers without it): stacked
 * bars a minute, from the newest 1,000 records of the last hour that match the page's filters.
 * Colours are attributes, not style, so the board's policy needs no inline style.
 */
export async function chartImage(
  ledger: { list(q: LedgerQuery): Promise<LedgerEntry[]> },
  query: LedgerQuery,
  now: number,
): Promise<Response> {
  const since = Math.max(query.since ?? 0, now - MINUTES * MINUTE);
  const entries = await ledger.list({ ...query, before: undefined, since, limit: MAX_LEDGER_PAGE });
  const bars = perMinute(entries, now);
  const top = Math.max(1, ...bars.map((b) => b.good! + b.warn! + b.bad!));
  const W = 600;
  const H = 120;
  const bw = W / MINUTES;
  let rects = '';
  bars.forEach((b, i) => {
    let y = H;
    for (const { tone, fill } of TONES) {
      const h = (b[tone]! / top) * (H - 10);
      if (h > 0)
        rects += `<rect x="${(i * bw + 1).toFixed(1)}" y="${(y - h).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${fill}"/>`;
      y -= h;
    }
  });
  const legend = TONES.map(
    ({ fill, label }, i) =>
      `<rect x="${i * 200}" y="${H + LEGEND}" width="10" height="10" fill="${fill}"/><text x="${i * 200 + 14}" y="${H + LEGEND + 9}" font-size="10" font-family="sans-serif" fill="#333">${escapeHtml(label.split(' (')[0]!)}</text>`,
  ).join('');
  const total = entries.length;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H + HEIGHT_BELOW}" width="${W}" height="${H + HEIGHT_BELOW}"><title>${total} deliveries in the last hour, per minute; the tallest minute had ${top === 1 && total === 0 ? 0 : top}</title><line x1="0" y1="${H}" x2="${W}" y2="${H}" stroke="#999"/>${rects}${timeAxis(now, W, H)}${legend}</svg>`;
  return new Response(svg, { headers: { ...SECURITY_HEADERS, 'content-type': 'image/svg+xml; charset=utf-8' } });
}
