#!/usr/bin/env node
// Holds the packages' sources to the sizes a reader can take in (issue 32): no source file over
// 250 lines and no folder with more than 12 source files; and the tests' folders (every package's,
// the root's, the examples') to 12 files too (issue 55). Run by `pnpm lint`; exits 1 naming each.
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

/** A test folder: at most MAX_FILES files of code (tests, helpers, fixtures), at every depth. */
function walkTests(dir) {
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  const files = entries.filter((e) => e.isFile() && /\.(ts|tsx|mts|mjs|cjs|js)$/.test(e.name) && !e.name.endsWith('.d.ts'));
  if (files.length > MAX_FILES)
    problems.push(
      `${path.relative(root, dir)}/ holds ${files.length} test files (at most ${MAX_FILES}): give its suites folders by what they test`,
    );
  for (const e of entries) {
    if (e.isDirectory() && !['node_modules', 'dist', '.next'].includes(e.name) && !e.name.startsWith('.'))
      walkTests(path.join(dir, e.name));
  }
}
const testDirs = [path.join(root, 'test')];
for (const name of fs.readdirSync(path.join(root, 'packages'))) testDirs.push(path.join(root, 'packages', name, 'test'));
for (const name of fs.readdirSync(path.join(root, 'examples'))) testDirs.push(path.join(root, 'examples', name, 'test'));
for (const dir of testDirs) if (fs.existsSync(dir)) walkTests(dir);

if (problems.length > 0) {
  console.error(`[payhook] sources past their size (scripts/check-lengths.mjs):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`sources: no file over ${MAX_LINES} lines, no folder over ${MAX_FILES} files; no test folder over ${MAX_FILES} files`);
