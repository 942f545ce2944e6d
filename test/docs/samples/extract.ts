// The guides' TypeScript samples, read out of the Markdown: every ```ts (or tsx) block of the
// README and of docs/**/*.md, with the marker line before it, if any.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a block's marker asks: `check` (the default: type-checked), `run` (checked, then run) or `skip`. */
export type Mode = 'check' | 'run' | 'skip';

export interface Sample {
  /** The Markdown file, relative to the repository's root. */
  file: string;
  /** The 1-based line of the opening fence: the block's first line of code is `line + 1`. */
  line: number;
  lang: 'ts' | 'tsx';
  mode: Mode;
  /** Why a block is skipped, from `<!-- sample: skip (reason) -->`. */
  reason?: string;
  code: string;
}

/** A marker that cannot be read: the test names it, so a typo cannot opt a block out silently. */
export interface BadMarker {
  file: string;
  line: number;
  text: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;
const LANGS: Record<string, Sample['lang']> = { ts: 'ts', typescript: 'ts', tsx: 'tsx' };
/** `<!-- sample: run -->` or `<!-- sample: skip (why) -->`, alone on its line right above the fence. */
const MARKER = /^\s*<!--\s*sample:\s*(run|skip)(?:\s+\((.+)\))?\s*-->\s*$/;
const ANY_MARKER = /<!--\s*sample\b/;

/** The Markdown the samples come from: the README and every .md under docs/, decisions included. */
export function markdownFiles(root: string): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') walk(path);
      else if (entry.isFile() && entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found;
}

/** Every TypeScript block of one Markdown file, and the sample markers it could not read. */
export function samplesOf(root: string, file: string): { samples: Sample[]; bad: BadMarker[] } {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const samples: Sample[] = [];
  const bad: BadMarker[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) {
      const next = FENCE.exec(lines[i + 1] ?? '');
      const aboveSample = next !== null && LANGS[next[3]!.toLowerCase()] !== undefined;
      if (ANY_MARKER.test(lines[i]!) && !(MARKER.test(lines[i]!) && aboveSample))
        bad.push({ file, line: i + 1, text: `${lines[i]!.trim()} (read: a run or skip marker alone on the line above a ts block)` });
      continue;
    }
    const [indent, fence, info] = [open[1]!, open[2]!, open[3]!];
    const close = new RegExp(`^\\s*\\${fence[0]}{${fence.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end]!)) end++;
    const lang = LANGS[info.toLowerCase()];
    if (lang) {
      const marker = i > 0 ? MARKER.exec(lines[i - 1]!) : null;
      const mode: Mode = marker ? (marker[1] as Mode) : 'check';
      if (mode === 'skip' && !marker?.[2]) bad.push({ file, line: i, text: `${lines[i - 1]!.trim()} (a skip needs its reason)` });
      const code = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
        .join('\n');
      samples.push({ file, line: i + 1, lang, mode, ...(marker?.[2] ? { reason: marker[2] } : {}), code: `${code}\n` });
    }
    i = end;
  }
  return { samples, bad };
}

/** Every sample of the README and docs/, in file order. */
export function allSamples(root: string): { samples: Sample[]; bad: BadMarker[] } {
  const samples: Sample[] = [];
  const bad: BadMarker[] = [];
  for (const file of markdownFiles(root)) {
    const found = samplesOf(root, file);
    samples.push(...found.samples);
    bad.push(...found.bad);
  }
  return { samples, bad };
}
