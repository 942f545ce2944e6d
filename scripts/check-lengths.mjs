#!/usr/bin/env node
// Holds the packages' sources to the sizes a reader can take in (issue 32): no source file over
// 250 lines and no folder with more than 12 source files. Run by `pnpm lint`; exits 1 naming each.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MAX_LINES = 250;
const MAX_FILES = 12;
const root = fileURLToPath(new URL('..', import.meta.url));
const problems = [];

function walk(dir) {
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  const sources = entries.filter((e) => e.isFile() && /\.(ts|tsx|mts)$/.test(e.name) && !e.name.endsWith('.d.ts'));
  if (sources.length > MAX_FILES)
    problems.push(`${path.relative(root, dir)}/ holds ${sources.length} source files (at most ${MAX_FILES}): give its parts folders`);
  for (const e of sources) {
    const file = path.join(dir, e.name);
    const lines = fs.readFileSync(file, 'utf8').split('\n').length - 1;
    if (lines > MAX_LINES) problems.push(`${path.relative(root, file)} has ${lines} lines (at most ${MAX_LINES}): split it by concept`);
  }
  for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
}

for (const name of fs.readdirSync(path.join(root, 'packages')).sort()) {
  const src = path.join(root, 'packages', name, 'src');
  if (fs.existsSync(src)) walk(src);
}

if (problems.length > 0) {
  console.error(`[payhook] sources past their size (scripts/check-lengths.mjs):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`sources: no file over ${MAX_LINES} lines, no folder over ${MAX_FILES} files`);
