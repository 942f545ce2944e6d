// Run the benchmarks under bench/, one after another, each in its own Node process (so one's JIT
// and heap state do not colour the next). `pnpm bench` (root) builds the packages, then runs this.
//
//   node bench/run.mjs            every benchmark
//   node bench/run.mjs core       only those whose file name contains "core"
//
// .mjs files run with node, .ts files with the workspace's tsx. Each writes its own section of
// BENCHMARKS.md. They run in the order of ORDER (core, http, stores, reference, memory); any other
// benchmark file added under bench/ runs after them, by name. callgrind.mjs runs with --write (it
// writes only when asked), and is skipped where valgrind is not installed; it takes the longest
// (about a quarter of an hour: every row runs twice under valgrind).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const filters = process.argv.slice(2);
const ORDER = ['core.mjs', 'http.mjs', 'stores.ts', 'reference.mjs', 'memory.mjs'];
const rank = (f) => (ORDER.includes(f) ? ORDER.indexOf(f) : ORDER.length);
const files = readdirSync(here)
  .filter((f) => (f.endsWith('.mjs') || f.endsWith('.ts')) && f !== 'run.mjs' && !f.endsWith('.d.ts'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
if (files.length === 0) {
  console.error(`[bench] nothing matches ${filters.join(', ')}`);
  process.exit(1);
}
const EXTRA_ARGS = { 'callgrind.mjs': ['--write'] };
const hasValgrind = () => spawnSync('valgrind', ['--version']).status === 0;
let failed = 0;
for (const f of files) {
  const file = path.join(here, f);
  if (f === 'callgrind.mjs' && !hasValgrind()) {
    console.log(`\n[bench] ${f} skipped: valgrind is not installed`);
    continue;
  }
  const [cmd, args] = f.endsWith('.ts')
    ? [path.join(root, 'node_modules/.bin/tsx'), [file]]
    : [process.execPath, [file, ...(EXTRA_ARGS[f] ?? [])]];
  console.log(
    `\n[bench] ${f} (load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')})`,
  );
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.error(`[bench] ${f} failed (${r.status ?? r.signal})`);
  }
}
process.exit(failed ? 1 : 0);
