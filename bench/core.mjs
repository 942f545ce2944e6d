// Core pipeline benchmark: payhook's `process` (what the adapters call) and `handle(Request)` on the
// memory store, against the floor (HMAC + timingSafeEqual + JSON.parse), @octokit/webhooks'
// verifyAndReceive, stripe and svix, on the same ~660-byte payloads, in one process. The rows are
// built by bench/lib/contenders.mjs (shared with bench/callgrind.mjs). Writes the "## Core pipeline"
// section of BENCHMARKS.md.
//
//   ./node_modules/.bin/pnpm --filter @payhook/core build && node bench/core.mjs
//
// Options (environment):
//   BENCH_ROUNDS=3        rounds of the rows; each figure is the median of the rounds
//   BENCH_NO_WRITE=1      print only, leave BENCHMARKS.md alone
//   BENCH_NO_PIECES=1     skip the breakdown of the pipeline into its pieces
//   BENCH_PROFILE=1       profile process and handle even when the targets are met
//   BENCH_CORE_DIST=path  measure another build of core (its dist/index.js; print only). A build with
//                         no otel.js beside it (before the /otel entry) is measured without processOtelNoop
//
// It measures; it never asserts a target (a miss is reported, not failed). It is not part of the
// test suite.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROWS as CONTENDERS, STORE_MAX, N, loadOtel, loadPeers, makeContenders, makeDeliveries } from './lib/contenders.mjs';
import { profilePipeline } from './lib/core-profile.mjs';
import { coreFindings, coreSection, targetRatios } from './lib/core-report.mjs';
import { cpuTimeCheck, measureRows } from './lib/measure.mjs';
import { pieceRows } from './lib/pieces.mjs';
import { profile } from './lib/profile.mjs';
import { coreBuild, load, root, version, writeSection } from './lib/report.mjs';
import { selfCheck } from './lib/self-check.mjs';
import { loadCore } from './lib/load-core.mjs';

const coreDir = path.join(root, 'packages/core');
const coreEntry = process.env.BENCH_CORE_DIST ? path.resolve(process.env.BENCH_CORE_DIST) : path.join(coreDir, 'dist/index.js');
const distDir = path.dirname(coreEntry);
if (!existsSync(coreEntry)) {
  console.error(`[bench] ${coreEntry} is missing: build core first (./node_modules/.bin/pnpm --filter @payhook/core build).`);
  process.exit(1);
}
const core = await loadCore(path.dirname(coreEntry));
// The adapter entry sits beside the root entry in the same build.
const adapter = await import(pathToFileURL(path.join(distDir, 'adapter.js')).href);

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3) | 0);
const WRITE = !process.env.BENCH_NO_WRITE && !process.env.BENCH_CORE_DIST;
const TARGETS = { octokit: 1.0, floor: 0.6, handle: 1.5 };

const loadStart = load();
// The /otel entry beside them, for processOtelNoop. Only another build (BENCH_CORE_DIST) may lack it:
// for the workspace's own build a missing otel.js is a stale build, and the row throws.
const otel = await loadOtel(distDir);
const withOtel = !(otel.missing && process.env.BENCH_CORE_DIST);
if (!withOtel) console.log(`[bench] ${otel.file} is missing (a build before the /otel entry): processOtelNoop is not measured`);
const modules = { core, adapter, otel, peers: await loadPeers() };
const d = makeDeliveries();
await selfCheck(modules, d);
const c = makeContenders(modules, d);
const row = (key, kind, of = key, input = undefined, label = CONTENDERS[of].label) => ({
  key,
  kind,
  label,
  async: CONTENDERS[of].async,
  fn: c[of](key, input),
});
const ROWS = [
  row('process', 'targeted'),
  ...(withOtel ? [row('processOtelNoop', 'telemetry')] : []),
  row('floor', 'targeted'),
  row('octokit', 'targeted'),
  row('handle', 'targeted'),
  row('webStandard', 'platform alone'),
  row('stripe', 'peer'),
  row('svix', 'peer'),
  row('processString', 'informative', 'process', d.strings, 'payhook `process` (string body)'),
  row('floorString', 'informative', 'floor', d.strings, 'floor (string body)'),
];
const byKey = Object.fromEntries(ROWS.map((r) => [r.key, r]));
const checkCounts = () => {
  for (const [name, n] of Object.entries(c.counts)) {
    if (n.handled !== n.calls)
      throw new Error(`[bench] ${name}: the handler ran ${n.handled} times in ${n.calls} iterations; the comparison would be unfair`);
  }
};

const sizes = d.bodies.map((b) => b.byteLength);
const sizeRange = [Math.min(...sizes), Math.max(...sizes)];
console.log(`[bench] ${N} distinct payloads of ${sizeRange.join('-')} bytes, memory store max ${STORE_MAX}, ${ROUNDS} round(s)`);
const results = await measureRows(ROWS, ROUNDS, c.resign);
checkCounts();
const wall = targetRatios(Object.fromEntries(ROWS.map((r) => [r.key, results[r.key].avg])), TARGETS);

let pieces;
if (!process.env.BENCH_NO_PIECES) {
  const p = await pieceRows({ core, distDir, coreDir, deliveries: d });
  pieces = { ...p, results: await measureRows(p.rows, 1) };
}

c.resign();
// Interleaved in groups: the targeted three alone, then the web-standard pair, then the peers. All
// seven in one loop lets the Request/Response rows' garbage land on whoever runs next.
// processOtelNoop joins the first group, so it is timed in the same chunks as process.
const cpuGroups = [
  ['process', ...(withOtel ? ['processOtelNoop'] : []), 'floor', 'octokit'],
  ['handle', 'webStandard'],
  ['stripe', 'svix'],
];
const perDelivery = {};
for (const group of cpuGroups) Object.assign(perDelivery, await cpuTimeCheck(group.map((k) => byKey[k])));
const cpu = { perDelivery, ...targetRatios(perDelivery, TARGETS) };
checkCounts();

// Where the time goes, when a target is missed (wall time or CPU time) or asked for.
const force = !!process.env.BENCH_PROFILE;
const profileShares =
  force || !wall.met.octokit || !wall.met.floor || !cpu.met.octokit || !cpu.met.floor
    ? await profilePipeline(c.process('profile'), { coreUrl: pathToFileURL(distDir).href })
    : undefined;
let handleProfile;
if (force || !wall.met.handleNet || !cpu.met.handleNet) {
  const fn = c.handle('profileHandle');
  for (let i = 0; i < 5000; i++) await fn();
  handleProfile = await profile(async () => {
    const end = performance.now() + 2500;
    while (performance.now() < end) for (let i = 0; i < 200; i++) await fn();
  });
}
checkCounts();

const fromCore = (name) => version(name, coreDir);
const versions = {
  '@payhook/core': JSON.parse(readFileSync(path.join(coreDir, 'package.json'), 'utf8')).version,
  '@octokit/webhooks': version('@octokit/webhooks'),
  stripe: version('stripe'),
  svix: version('svix'),
  mitata: version('mitata'),
  zod: fromCore('zod'),
  'secure-json-parse': fromCore('secure-json-parse'),
};
const findings = coreFindings({ rows: ROWS, results, targets: TARGETS, wall, cpu, pieces, profileShares, handleProfile });
const build = process.env.BENCH_CORE_DIST ? `\`${coreEntry}\` (BENCH_CORE_DIST)` : coreBuild(distDir);
console.log(`\n[bench] core measured: ${build}; load average at start ${loadStart}, now ${load()}\n`);
console.log(findings.join('\n'));
if (c.sink() < 0) console.log(c.sink());
if (WRITE) writeSection('## Core pipeline', coreSection({ findings, rounds: ROUNDS, build, versions, loadStart, sizes: sizeRange }));
