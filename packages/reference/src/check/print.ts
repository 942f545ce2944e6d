import { escapeText } from '@payhook/core/api';
import type { Row } from './run.js';

const LABEL = { agree: 'agree', differs: 'DIFFERS', skipped: 'skipped' } as const;
/** The table's detail column is cut here; the sections below it give the whole text. */
const DETAIL_WIDTH = 90;
/** At most this many differences are printed per check. */
const MAX_DIFFS = 20;

const cut = (text: string, width: number) => (text.length > width ? `${text.slice(0, width - 1)}…` : text);

/** `sk_test_…0001`: enough to tell keys apart, never the key. */
export const maskKey = (key: string) => `${key.slice(0, 8)}…${key.slice(-4)}`;

/** The report: a table of every check, then each difference as expected vs got, then why checks were skipped. */
export function formatReport(base: string, key: string, rows: Row[]): string {
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
  // What the service (or anyone reaching the callback) sent never writes a terminal sequence.
  return `${lines.map((line) => escapeText(line)).join('\n')}\n`;
}
