import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  COMMON_OUTCOMES,
  deadLetterReason,
  LEVEL,
  OUTCOMES,
  RECOVERED,
  SETTLED,
  STATUS,
  type DeliveryOutcome,
} from '../../src/protocol/outcomes.js';

const NAMES = Object.keys(OUTCOMES) as DeliveryOutcome[];
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every .ts file under core's src, as a path relative to it. */
const sources = (dir = SRC): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)).map((f) => join(d.name, f)) : d.name.endsWith('.ts') ? [d.name] : [],
  );

const isName = (s: string | undefined): s is DeliveryOutcome => (NAMES as (string | undefined)[]).includes(s);
/** A line that is one item of a list or table: `'failed',`, `failed: 500,`, `case 'failed':`, `| 'failed' // 500`. */
const ITEM = /^\s*(?:case\s+|\|\s*)?(['"]?)([a-z][a-z-]*)\1\s*(?:[:,;|]|\/\/|$)/;

/**
 * The lists and tables of outcome names in `text`, by line: three or more outcome names as string
 * literals on one line (`new Set(['processed', 'queued', 'duplicate'])`, `o === 'a' || o === 'b' || ...`),
 * or three or more lines in a row that are each an outcome as an item (an array, an object's keys,
 * a switch's cases, a union). Comment lines do not break a run; other code does.
 */
function outcomeLists(text: string): string[] {
  const hits: string[] = [];
  let run: string[] = [];
  const endRun = (line: number) => {
    if (new Set(run).size >= 3) hits.push(`${line - run.length}: ${run.join(', ')}`);
    run = [];
  };
  text.split('\n').forEach((line, i) => {
    const quoted = new Set([...line.matchAll(/(['"`])([a-z][a-z-]*)\1/g)].map((m) => m[2]).filter(isName));
    if (quoted.size >= 3) hits.push(`${i + 1}: ${[...quoted].join(', ')}`);
    if (/^\s*(\/\/|\*|\/\*)/.test(line) || line.trim() === '') return;
    const item = ITEM.exec(line)?.[2];
    if (isName(item)) run.push(item);
    else endRun(i + 1);
  });
  endRun(0);
  return hits;
}

describe('the one outcome table', () => {
  it('is the only list of outcome names in core: every other is derived from it', () => {
    const files = sources().filter((f) => f !== 'outcomes.ts');
    expect(files.length).toBeGreaterThan(50);
    const found = Object.fromEntries(
      files.map((f) => [f, outcomeLists(readFileSync(join(SRC, f), 'utf8'))] as const).filter(([, hits]) => hits.length > 0),
    );
    expect(found).toEqual({});
  });

  it('finds a list written out, in one line or as a table', () => {
    expect(outcomeLists("const RAN = new Set(['processed', 'queued', 'duplicate']);")).toHaveLength(1);
    expect(outcomeLists("const ran = o === 'processed' || o === 'queued' || o === 'rejected';")).toHaveLength(1);
    expect(
      outcomeLists("const LEVEL = {\n  processed: 'info',\n  // copies\n  queued: 'info',\n  'in-progress': 'info',\n};"),
    ).toHaveLength(1);
    expect(outcomeLists("switch (o) {\n  case 'processed':\n  case 'duplicate':\n  case 'ignored':\n    return 1;\n}")).toHaveLength(1);
    expect(outcomeLists("type O =\n  | 'processed' // 200\n  | 'queued' // 200\n  | 'held'; // 409")).toHaveLength(1);
    expect(outcomeLists("const S = [\n  'pending',\n  'failed',\n  'cancelled',\n];")).toEqual([]);
    expect(
      outcomeLists(
        "if (p === 'too-large') return reportOf('too-large');\nif (p === 'too-slow') return reportOf('too-slow');\nreturn reportOf('malformed');",
      ),
    ).toEqual([]);
  });

  it('derives the hot-path lookups as plain objects over every outcome', () => {
    expect(Object.keys(STATUS)).toEqual(NAMES);
    expect(Object.keys(LEVEL)).toEqual(NAMES);
    for (const o of NAMES) {
      expect(STATUS[o]).toBe(OUTCOMES[o].status);
      expect(LEVEL[o]).toBe(OUTCOMES[o].level);
    }
  });

  it('holds facts that agree with one another', () => {
    for (const o of NAMES) {
      const f = OUTCOMES[o];
      // Settled: the service is answered 2xx, and a queue worker completes the job or dead-letters it for good.
      if (f.settled) expect([f.status, f.job], o).toEqual([200, expect.not.stringMatching('retry')]);
      // A handler left running after the answer: 202, or 503 so that the service asks again.
      if (f.handlers === 'running') expect([202, 503], o).toContain(f.status);
      // The common answers are neither errors nor dead letters.
      if (f.common) expect([f.level, f.deadLetter], o).toEqual([expect.not.stringMatching('error'), 'never']);
    }
    expect([...SETTLED]).toEqual(['processed', 'queued', 'duplicate', 'ignored', 'rejected']);
    expect([...RECOVERED]).toEqual(['processed', 'queued', 'rejected']);
    expect(COMMON_OUTCOMES).toEqual(['processed', 'queued', 'duplicate', 'ignored', 'accepted']);
  });

  it('names the dead letters: rejected always, a failure only where no service retry follows', () => {
    const reasons = NAMES.flatMap((o) =>
      (['answer', 'reconcile', 'late'] as const).map((w) => deadLetterReason(o, w)).filter((r) => r !== undefined),
    );
    expect(reasons.sort()).toEqual(['late-failed', 'reconcile-failed', 'rejected', 'rejected', 'rejected']);
    expect(deadLetterReason('failed', 'answer')).toBeUndefined();
  });
});
