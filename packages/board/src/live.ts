import type { LedgerEntry, LedgerQuery } from '@payhook/core';
import { SECURITY_HEADERS } from './base/guard.js';
import { at, bare, link, type View } from './views/page.js';
import { escapeText } from '@payhook/core/api';
import { eventLabel, toneOf } from './views/outcome.js';
import { paymentOf } from './views/payment.js';
import { deadTone, resolverName, resolverOf } from './views/resolved.js';

/** How many records one look at the ledger sends at most: past that many a second, the page shows the newest and a reload shows all. */
const BATCH = 100;
/**
 * How far before the newest record sent each look starts: a record is written after its answer
 * (in batches), so one received earlier than the last sent may reach the ledger after it.
 */
const LOOKBACK_MS = 15_000;
/** How long one stream lasts; the browser then opens the next (EventSource does it by itself). */
const LIVE_FOR_MS = 5 * 60_000;
/** Ids remembered as sent, so that the look-back sends none twice. */
const REMEMBERED = 1_000;

/**
 * What the page's script needs to add a row: plain values, written into the page as text
 * (`textContent`), each written out as the server-rendered list writes it (escapeText: control,
 * bidi and lone surrogate characters as `\xNN` or `\uXXXX`), so a live row reads as the same row
 * after a reload.
 */
export interface LiveRow {
  id: string;
  href: string;
  /** Whose it is: shown in the platform view's Account column ('' for a record no account was resolved for). */
  account: string;
  receivedAt: string;
  reference: string;
  /** The Order and Amount cells (views/table.ts): from the kept body, or `why` there is nothing to show. */
  order: string;
  customer: string;
  amount: string;
  why: string;
  event: string;
  outcome: string;
  tone: string;
  late: string;
  lateTone: string;
  /** What settled this failure later ('attempt 2'), and its page; '' when nothing did (views/resolved.ts). */
  resolved: string;
  resolvedHref: string;
  deadLetter: string;
  /** Red while the dead letter is open, neutral once retried. */
  deadTone: string;
  status: number;
  attempt: string;
  signature: string;
  took: string;
}

export function liveRow(view: Pick<View, 'settings'>, e: LedgerEntry, resolvedBy?: LedgerEntry): LiveRow {
  const p = paymentOf(e);
  const resolved = (tone: string) => (resolvedBy === undefined ? tone : 'resolved');
  const row: LiveRow = {
    id: e.id,
    href: link(view, `/deliveries/${encodeURIComponent(e.id)}`),
    account: e.account ?? '',
    receivedAt: at(e.receivedAt),
    reference: e.reference ?? '',
    order: p.order ?? '',
    customer: p.customer ?? '',
    amount: p.amount ?? '',
    why: p.why ?? '',
    event: eventLabel(e),
    outcome: e.outcome,
    tone: e.late ? toneOf(e.outcome) : resolved(toneOf(e.outcome)),
    late: e.late?.outcome ?? '',
    lateTone: e.late ? resolved(toneOf(e.late.outcome)) : '',
    resolved: resolvedBy ? resolverName(resolvedBy) : '',
    resolvedHref: resolvedBy ? link(view, `/deliveries/${encodeURIComponent(resolvedBy.id)}`) : '',
    deadLetter: e.deadLetter ? (e.deadLetter.retriedBy ? 'dead letter, retried' : 'dead letter') : '',
    deadTone: e.deadLetter ? deadTone(e) : '',
    status: e.status,
    attempt: e.attempt === undefined ? '' : String(e.attempt),
    signature: e.signature,
    took: `${Math.round(e.durationMs)} ms`,
  };
  // The sender's words (a refused delivery's reference and event) reach the page as text, written out as the list writes them.
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' ? escapeText(v) : v])) as unknown as LiveRow;
}

/** The streams open now, per board: each looks at the ledger once a `live.intervalMs`. */
export interface LiveCounter {
  open: number;
}

/**
 * New deliveries as server-sent events, for a list page left open: every `live.intervalMs` the
 * ledger is asked for records newer than the last one sent (the page's newest, `after`, or the
 * browser's Last-Event-ID after a reconnect), with the page's filters, through the viewer's own
 * ledger (`view.ledger`: an account's viewer gets their account's records only, the look-back
 * too). A stream ends after five minutes and the browser opens another; at most `live.maxOpen`
 * are open at once (503 past that).
 */
export function liveStream(
  view: View,
  query: LedgerQuery,
  request: Request,
  counter: LiveCounter,
  matches: (e: LedgerEntry) => boolean = () => true,
): Response {
  const { settings } = view;
  if (counter.open >= settings.live.maxOpen) return bare(503, 'Too many live views are open; reload later.');
  // Only records newer than the page's newest (or the last one this browser got, after a reconnect).
  const floor = request.headers.get('last-event-id') ?? view.url.searchParams.get('after') ?? '';
  let newest = idTime(floor) ?? Date.now();
  const sent = new Set<string>();
  const ledger = view.ledger;
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let ended = false;
  counter.open += 1;
  const end = (controller?: ReadableStreamDefaultController<Uint8Array>) => {
    if (ended) return;
    ended = true;
    counter.open -= 1;
    clearTimeout(timer);
    try {
      controller?.close();
    } catch {} // already closed by the reader's cancel
  };
  const startedAt = Date.now();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // Nothing is sent once the browser has gone: a look that was waiting on the ledger then ends quietly.
      const send = (text: string) => {
        if (ended) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          end();
        }
      };
      // The browser waits this long before opening the next stream.
      send(`retry: ${settings.live.intervalMs}\n: live\n\n`);
      const look = async () => {
        try {
          const found = await ledger.list({
            ...query,
            before: undefined,
            since: Math.max(query.since ?? 0, newest - LOOKBACK_MS),
            limit: BATCH,
          });
          for (const e of found.filter((x) => x.id > floor && !sent.has(x.id) && matches(x)).reverse()) {
            // A failure settled by a later attempt in the same look reads as resolved, as after a reload.
            send(`id: ${e.id}\nevent: delivery\ndata: ${JSON.stringify(liveRow(view, e, resolverOf(e, found)))}\n\n`);
            sent.add(e.id);
            if (sent.size > REMEMBERED) sent.delete(sent.values().next().value!);
            newest = Math.max(newest, e.receivedAt);
          }
        } catch {
          send(': the ledger did not answer; trying again\n\n');
        }
        if (Date.now() - startedAt >= LIVE_FOR_MS) end(controller);
        else if (!ended) timer = setTimeout(look, settings.live.intervalMs);
      };
      timer = setTimeout(look, settings.live.intervalMs);
    },
    cancel: () => end(),
  });
  return new Response(body, { headers: { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8' } });
}

/** A ledger id starts with its time in base 36 (11 digits): the time to ask from, or undefined for none. */
function idTime(id: string): number | undefined {
  if (!/^[0-9a-z]{11}-/.test(id)) return undefined;
  const t = Number.parseInt(id.slice(0, 11), 36);
  return Number.isSafeInteger(t) ? t : undefined;
}
