import { escapeText } from '../base/escape-text.js';
import type { LedgerEntry } from '../storage/ledger.js';

// What the `payhook` command prints of the ledger's records (cli.ts). Every value comes from the
// ledger, which holds what anyone sent: each goes through escapeText (escape-text.ts), so no
// control character, newline or bidi control reaches the terminal.

/** A time (epoch ms) as ISO 8601; a value that is none (a forged record's) as it is. */
export function iso(t: unknown): string {
  const d = typeof t === 'number' ? new Date(t) : undefined;
  return d !== undefined && !Number.isNaN(d.getTime()) ? d.toISOString() : String(t);
}

export interface ListOptions {
  json?: boolean;
  /** What to say when no record matches. */
  empty: string;
  /** The next page's `--before`, when records lie past this page. */
  next?: string;
}

/** `list`: a table of the records, newest first (or one JSON record per line), and how to get the next page when there is one. */
export function printList(entries: readonly LedgerEntry[], { json, empty, next }: ListOptions): void {
  if (json) {
    for (const e of entries) console.log(escapeText(JSON.stringify(e), true));
    return;
  }
  if (entries.length === 0) {
    console.log(empty);
    return;
  }
  // A platform's records name their account: a column of its own, only where one is named.
  const accounts = entries.some((e) => e.account !== undefined);
  const rows = entries.map((e) =>
    [
      e.id,
      iso(e.receivedAt),
      ...(accounts ? [e.account ?? '-'] : []),
      e.source,
      e.event ?? '-',
      e.reference ?? '-',
      // Whether the sender was who it said: a 401's reference and event are anyone's text.
      e.signature === 'valid' || e.signature === 'invalid' ? e.signature : '-',
      `${e.status} ${e.outcome}${e.late ? ` -> ${e.late.outcome}` : ''}`,
      `${e.durationMs}ms`,
      [e.deadLetter && (e.deadLetter.retriedBy ? 'dead (retried)' : `dead: ${e.deadLetter.reason}`), e.forced && 'forced']
        .filter(Boolean)
        .join(' '),
    ].map((cell) => escapeText(String(cell))),
  );
  const head = ['ID', 'RECEIVED', ...(accounts ? ['ACCOUNT'] : []), 'SOURCE', 'EVENT', 'REFERENCE', 'SIG', 'ANSWER', 'TOOK', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows])
    console.log(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  console.log(`\n${entries.length} shown${next === undefined ? '' : `; the next page: --before ${escapeText(next)}`}`);
}

/**
 * The order `show` prints a record's fields in, whatever order its store returns them (Postgres's
 * jsonb sorts keys by length): LedgerEntry's, the body last. A nested field is one line each
 * (`late.outcome`, `deadLetter.at`), in the order below; a field not named here follows, by name.
 */
const ORDER = [
  'id',
  'receivedAt',
  'source',
  'account',
  'reference',
  'event',
  'dedupeKey',
  'outcome',
  'status',
  'durationMs',
  'attempt',
  'signature',
  'secretIndex',
  'signatureHeader',
  'bodyEncoding',
  'bodySha256',
  'bodyPrefix',
  'error',
  'late',
  'deadLetter',
  'replayOf',
  'forced',
];
const NESTED: Record<string, readonly string[]> = { late: ['outcome', 'durationMs', 'error'], deadLetter: ['reason', 'at', 'retriedBy'] };
/** The fields that are times, in epoch ms: printed as ISO 8601, as `list` does. */
const TIMES = new Set(['receivedAt', 'deadLetter.at']);

function fields(o: Record<string, unknown>, order: readonly string[], path: string): string[] {
  const keys = [
    ...order.filter((k) => Object.hasOwn(o, k)),
    ...Object.keys(o)
      .filter((k) => !order.includes(k))
      .sort(),
  ];
  return keys.flatMap((k) => {
    const v = o[k];
    const name = path + k;
    if (v === undefined) return [];
    if (typeof v === 'object' && v !== null && !Array.isArray(v))
      return fields(v as Record<string, unknown>, NESTED[name] ?? [], `${name}.`);
    return [`${name}: ${TIMES.has(name) ? iso(v) : typeof v === 'object' ? JSON.stringify(v) : String(v)}`];
  });
}

/** `show`: one `field: value` line each, in ORDER, then the body, pretty-printed when it is JSON. */
export function show(e: LedgerEntry): string {
  const { body, ...rest } = e;
  const lines = fields(rest, ORDER, '');
  if (body !== undefined) {
    // Split only JSON.stringify's own lines (it escapes newlines within strings); any other body is one line.
    let pretty = [String(body)];
    try {
      if (e.bodyEncoding === 'utf8') pretty = JSON.stringify(JSON.parse(body), null, 2).split('\n');
    } catch {}
    lines.push('body:', ...pretty);
  }
  return lines.map((line) => escapeText(line)).join('\n');
}
