import { escapeText } from '@payhook/core/api';
import type { Row } from './run.js';

const LABEL = { agree: 'agree', differs: 'DIFFERS', skipped: 'skipped' } as const;
/** The table's detail column is cut here; the sections below it give the whole text. */
const DETAIL_WIDTH = 90;
/** At most this many differences are printed per check. */
const MAX_DIFFS = 20;
/** A secret shorter than this (a webhook secret such as "test") is not masked in text: it would mask ordinary words. */
const MIN_MASKED = 8;

const cut = (text: string, width: number) => (text.length > width ? `${text.slice(0, width - 1)}…` : text);

/**
 * `sk_test_…0001`, `whsec_…cret`: enough to tell secrets apart, never the secret. The prefix up to
 * its last `_` (within 9 characters, else up to 4), and the last 4 only when at least 12 more stay
 * hidden.
 */
export function maskKey(secret: string): string {
  const underscore = secret.lastIndexOf('_', 8);
  const prefix = secret.slice(0, underscore >= 0 ? underscore + 1 : Math.min(4, Math.floor(secret.length / 2)));
  const rest = secret.slice(prefix.length);
  return `${prefix}…${rest.length >= 16 ? rest.slice(-4) : ''}`;
}

const quoteRegExp = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
const base64Forms = (text: string) => {
  const bytes = Buffer.from(text);
  return [bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')];
};

/**
 * Every way a service can send a secret back: as it is; each character percent-encoded or not (any
 * case), JSON-escaped (`\/`, `\u002f`); in base64 or base64url, alone or as Basic auth's
 * `key:` / `:key`. One pattern, matched case-insensitively (masking a near-copy costs nothing).
 */
function secretPattern(secret: string): RegExp {
  const char = (c: string) => {
    const hex = c.charCodeAt(0).toString(16).padStart(2, '0');
    const forms = [quoteRegExp(c), `%${hex}`, `\\\\u00${hex}`];
    if (!/[A-Za-z0-9]/.test(c)) forms.push(`\\\\${quoteRegExp(c)}`);
    return `(?:${forms.join('|')})`;
  };
  const encoded = [...secret].map(char).join('');
  // Longest first: base64 of `key` is nearly a prefix of base64 of `key:`.
  const b64 = [...new Set([secret, `${secret}:`, `:${secret}`].flatMap(base64Forms))].sort((a, b) => b.length - a.length);
  return new RegExp([...b64.map(quoteRegExp), encoded].join('|'), 'gi');
}

/** Text with every secret in `secrets` (in any of the forms above) replaced by its mask. */
export function redactor(secrets: (string | undefined)[]): (text: string) => string {
  const masks = secrets
    .filter((s): s is string => s !== undefined && s.length >= MIN_MASKED)
    .map((s) => [secretPattern(s), maskKey(s)] as const);
  return (text) => masks.reduce((t, [pattern, mask]) => t.replace(pattern, mask), text);
}

/**
 * One line of what may reach the terminal of text the service (or anyone reaching the callback)
 * sent: secrets masked, then control, bidi and lone-surrogate characters written out (`\x1b`,
 * `\u202e`, a newline as `\x0a`), so no terminal sequence, forged line or reordered text is printed.
 */
export const printable = (text: string, redact: (text: string) => string) => escapeText(redact(text));

/** The report: a table of every check, then each difference as expected vs got, then why checks were skipped. */
export function formatReport(base: string, key: string, rows: Row[], redact = redactor([key])): string {
  const lines = [`Contract check of ${base} with ${maskKey(key)}`, ''];
  const nameWidth = Math.max(5, ...rows.map((r) => r.name.length));
  const header = `${'Check'.padEnd(nameWidth)}  ${'Result'.padEnd(7)}  Detail`;
  lines.push(header, `${'-'.repeat(nameWidth)}  ${'-'.repeat(7)}  ${'-'.repeat(6)}`);
  for (const row of rows) lines.push(`${row.name.padEnd(nameWidth)}  ${LABEL[row.outcome].padEnd(7)}  ${cut(row.detail, DETAIL_WIDTH)}`);

  const differs = rows.filter((r) => r.outcome === 'differs');
  if (differs.length > 0) {
    lines.push('', `Differences (${differs.length}): expected is the contract, got is what the service sent`);
    for (const row of differs) {
      lines.push('', `  ✗ ${row.name}`, `    ${row.detail}`);
      for (const d of row.diffs.slice(0, MAX_DIFFS)) lines.push(`    ${d.at}: expected ${d.expected}, got ${d.got}`);
      if (row.diffs.length > MAX_DIFFS) lines.push(`    … and ${row.diffs.length - MAX_DIFFS} more`);
    }
  }
  const skipped = rows.filter((r) => r.outcome === 'skipped');
  if (skipped.length > 0) {
    lines.push('', `Skipped (${skipped.length}): not a difference, the check could not run here`);
    for (const row of skipped) lines.push(`  - ${row.name}: ${row.detail}`);
  }
  const count = (o: Row['outcome']) => rows.filter((r) => r.outcome === o).length;
  lines.push(
    '',
    `${rows.length} checks: ${count('agree')} agree, ${count('differs')} ${count('differs') === 1 ? 'DIFFERS' : 'DIFFER'}, ${count('skipped')} skipped.`,
  );
  // What the service sent never writes a terminal sequence, nor prints a secret it echoed.
  return `${lines.map((line) => printable(line, redact)).join('\n')}\n`;
}
