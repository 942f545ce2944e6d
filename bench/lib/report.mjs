// What every benchmark's section of BENCHMARKS.md shares: the machine line, versions, the load
// average, and replacing its own `## ...` section (and nothing else) in the file.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const root = path.resolve(benchDir, '..');
const requireFromBench = createRequire(path.join(benchDir, 'package.json'));

export function machine() {
  const cpus = os.cpus();
  return `${cpus[0]?.model?.trim() ?? 'unknown CPU'}, ${cpus.length} logical cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.platform()} ${os.release()} ${os.arch()}`;
}

export const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/** The installed version of a package, resolved from bench/ (or from `from`, a directory). */
export function version(name, from = benchDir) {
  const req = from === benchDir ? requireFromBench : createRequire(path.join(from, 'package.json'));
  let dir;
  try {
    dir = path.dirname(req.resolve(`${name}/package.json`));
  } catch {
    dir = path.dirname(req.resolve(name));
    while (!existsSync(path.join(dir, 'package.json')) || JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).name !== name) {
      dir = path.dirname(dir);
    }
  }
  return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
}

export const date = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

export const fmt = (x, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** Replace the level-2 section with this heading (up to the next level-2 heading), or append it. */
export function writeSection(heading, body) {
  if (process.env.BENCH_NO_WRITE) return;
  const file = path.join(root, 'BENCHMARKS.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trimEnd() === heading);
  let next;
  if (start < 0) next = text.replace(/\n*$/, '\n\n') + body.replace(/\n*$/, '\n');
  else {
    let end = lines.findIndex((l, i) => i > start && /^## /.test(l));
    if (end < 0) end = lines.length;
    const before = lines.slice(0, start).join('\n');
    const after = lines.slice(end).join('\n');
    next = (before ? before.replace(/\n*$/, '\n\n') : '') + body.replace(/\n*$/, '\n') + (after ? '\n' + after : '');
  }
  writeFileSync(file, next);
  console.log(`[bench] wrote the "${heading}" section of BENCHMARKS.md`);
}

/**
 * Which build of @payhook/core a benchmark measured, for its header: the dist directory and when
 * it was built, the commit checked out (and whether packages/core/src has uncommitted changes),
 * and whether any source file is newer than the build (then the figures may not match the source).
 */
export function coreBuild(distDir) {
  const iso = (d) => d.toISOString().replace(/\.\d+Z$/, 'Z');
  const built = statSync(path.join(distDir, 'index.js')).mtime;
  const src = path.join(root, 'packages/core/src');
  let commit = 'an unknown commit';
  try {
    const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    commit = `commit ${git('rev-parse', '--short', 'HEAD')}`;
    if (git('status', '--porcelain', '--', 'packages/core/src')) commit += ' with uncommitted changes in packages/core/src';
  } catch {}
  let newest = 0;
  for (const f of readdirSync(src, { recursive: true })) {
    const t = statSync(path.join(src, f)).mtimeMs;
    if (t > newest) newest = t;
  }
  const fresh =
    newest > built.getTime()
      ? `; **packages/core/src has files changed after this build** (newest ${iso(new Date(newest))}): rebuild core before trusting these figures`
      : '; no file under packages/core/src is newer than the build';
  return `\`${path.relative(root, distDir) || distDir}\` built ${iso(built)}, checkout at ${commit}${fresh}`;
}

/** CPU seconds (user + system) used so far by a process and all its descendants, from /proc (Linux); NaN elsewhere. */
export function treeCpuSeconds(pid) {
  try {
    const tick = 100; // USER_HZ on Linux
    const stats = new Map();
    for (const d of readdirSafe('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const s = readFileSync(`/proc/${d}/stat`, 'utf8');
        const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
        stats.set(Number(d), { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / tick });
      } catch {}
    }
    let total = 0;
    const todo = [pid];
    const seen = new Set();
    while (todo.length) {
      const p = todo.pop();
      if (seen.has(p)) continue;
      seen.add(p);
      const s = stats.get(p);
      if (s) total += s.cpu;
      for (const [child, cs] of stats) if (cs.ppid === p) todo.push(child);
    }
    return total;
  } catch {
    return NaN;
  }
}
function readdirSafe(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
