#!/usr/bin/env node
// Holds the packages' import graphs to their layout (issues 32, 55): no package's sources import
// in a circle, type imports included, and in every package a folder imports only its own floor or
// the floors below it, the files at src/ being the top floor. Run by `pnpm lint`; prints each
// offending import and exits 1.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Each package's folders under src/, lowest floor first; the files at src/ itself are the top
 * floor. A package with no folders needs no list; a folder missing from its package's list fails.
 */
const FLOORS = {
  core: [
    'base',
    'platform',
    'protocol',
    'reading',
    'storage',
    'contracts',
    'settings',
    'accounts',
    'observing',
    'routing',
    'steps',
    'ledger',
    'running',
    'node-bridge',
    'reconcile',
    'cli',
  ],
  // The service's model, its deliveries and HTTP plumbing; the contract its pages and routes share
  // (the context a handler gets); then the pages and routes, the state file, the wiring, the
  // conformance check and the commands.
  reference: ['domain', 'delivery', 'http', 'contract', 'state', 'pages', 'routes', 'service', 'check', 'cli'],
  board: ['base', 'views'],
  'store-postgres': ['base', 'sql', 'ledger'],
  testing: ['events', 'targets', 'delivering', 'matchers', 'reference', 'conformance'],
};

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"\n]+)\1/g;

function sourcesOf(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourcesOf(full));
    else if (/\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** file -> the files of the same package it imports (relative specifiers, and `#platform` in core). */
function graphOf(src) {
  const files = sourcesOf(src);
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const targets = new Set();
    for (const [, , spec] of text.matchAll(IMPORT)) {
      let target;
      if (spec === '#platform') target = path.join(src, 'platform/node-apis.ts');
      else if (spec.startsWith('.')) target = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
      else continue;
      if (known.has(target)) targets.add(target);
      else if (known.has(`${target}.ts`)) targets.add(`${target}.ts`);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components of more than one file, or a file importing itself (Tarjan). */
function circlesOf(graph) {
  let index = 0;
  const stack = [];
  const seen = new Map();
  const circles = [];
  const visit = (v) => {
    const mine = { index, low: index, onStack: true };
    seen.set(v, mine);
    index++;
    stack.push(v);
    for (const w of graph.get(v)) {
      const theirs = seen.get(w);
      if (!theirs) {
        visit(w);
        mine.low = Math.min(mine.low, seen.get(w).low);
      } else if (theirs.onStack) mine.low = Math.min(mine.low, theirs.index);
    }
    if (mine.low === mine.index) {
      const circle = [];
      let w;
      do {
        w = stack.pop();
        seen.get(w).onStack = false;
        circle.push(w);
      } while (w !== v);
      if (circle.length > 1 || graph.get(v).has(v)) circles.push(circle);
    }
  };
  for (const v of graph.keys()) if (!seen.has(v)) visit(v);
  return circles;
}

const rel = (file) => path.relative(root, file);
const problems = [];

const packagesDir = path.join(root, 'packages');
for (const name of fs.readdirSync(packagesDir).sort()) {
  const src = path.join(packagesDir, name, 'src');
  if (!fs.existsSync(src)) continue;
  const graph = graphOf(src);
  for (const circle of circlesOf(graph)) {
    const members = new Set(circle);
    const edges = circle.flatMap((a) => [...graph.get(a)].filter((b) => members.has(b)).map((b) => `${rel(a)} -> ${rel(b)}`));
    problems.push(`circle in ${name}:\n    ${edges.join('\n    ')}`);
  }
  const floors = FLOORS[name] ?? [];
  const floorOf = (file) => {
    const folder = path.relative(src, file).split(path.sep);
    if (folder.length === 1) return floors.length; // a file at src/: the top floor
    const floor = floors.indexOf(folder[0]);
    if (floor === -1)
      throw new Error(`[payhook] ${name}'s folder "src/${folder[0]}" has no floor in scripts/check-layers.mjs: add it to FLOORS.${name}.`);
    return floor;
  };
  for (const [file, targets] of graph) {
    floorOf(file);
    for (const target of targets) {
      if (floorOf(target) > floorOf(file)) problems.push(`up a floor: ${rel(file)} -> ${rel(target)}`);
    }
  }
}

// Tests by one rule (issue 55): a package's tests, the root's (what crosses packages: adapters by
// stores, faults, runtimes, release), the examples' and bench/ share code only through
// @payhook/test-support (test/support), never by a relative path into each other; and only a
// package's own tests reach into its src/ (the others import what it publishes).
const zoneOf = (file) => {
  const r = rel(file).split(path.sep).join('/');
  let m;
  if ((m = /^packages\/([^/]+)\/test\//.exec(r))) return `packages/${m[1]}/test`;
  if ((m = /^packages\/([^/]+)\/src\//.exec(r))) return `packages/${m[1]}/src`;
  if (r.startsWith('test/support/')) return 'test/support';
  if (r.startsWith('test/')) return 'test';
  if (r.startsWith('bench/')) return 'bench';
  // The examples are one family: each runs the shop's contract suite (examples/shop/test).
  if (/^examples\/[^/]+\/test\//.test(r)) return 'examples/test';
  return undefined;
};
function testFiles(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) testFiles(full, out);
    else if (/\.(ts|tsx|mts|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}
const testRoots = [path.join(root, 'test'), path.join(root, 'bench')];
for (const name of fs.readdirSync(packagesDir)) testRoots.push(path.join(packagesDir, name, 'test'));
for (const name of fs.readdirSync(path.join(root, 'examples'))) testRoots.push(path.join(root, 'examples', name, 'test'));
for (const file of testRoots.filter((d) => fs.existsSync(d)).flatMap((d) => testFiles(d))) {
  const from = zoneOf(file);
  for (const [, , spec] of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
    if (!spec.startsWith('.')) continue;
    const to = zoneOf(path.resolve(path.dirname(file), spec));
    if (to === undefined || to === from) continue;
    if (to === 'test/support') problems.push(`test import: ${rel(file)} -> ${spec}: import '@payhook/test-support/…' instead`);
    else if (to.endsWith('/src')) {
      if (to !== from.replace(/\/test$/, '/src'))
        problems.push(
          `test import: ${rel(file)} -> ${spec}: another package's src/; import what it publishes, or move the suite into that package`,
        );
    } else problems.push(`test import: ${rel(file)} -> ${spec}: tests share code only through @payhook/test-support (test/support)`);
  }
}

if (problems.length > 0) {
  console.error(`[payhook] the import graph breaks the layout (scripts/check-layers.mjs):\n  ${problems.join('\n  ')}`);
  console.error('Move a shared type down a floor (core: into contracts/), or the importing file up one.');
  process.exit(1);
}
console.log(
  'import graph: no circles; every package imports only its own floor or below; tests share code only through @payhook/test-support',
);
