// Instructions per delivery, counted by valgrind's callgrind: they repeat to within about 1% however
// loaded the machine is, unlike wall time. For each row, node runs under callgrind twice with the
// same warm-up, once measuring `--iterations` deliveries and once none; the difference divided by
// the iterations is the row's cost. Node runs with --predictable (no concurrent JIT or GC threads)
// and fixed hash and random seeds.
// valgrind's CPU has no SHA extensions, so HMAC costs more instructions here than on the real CPU:
// give wall-time ratios (bench/core.mjs) beside these. The rows are bench/lib/contenders.mjs's.
//
//   node bench/callgrind.mjs [--iterations 20000] [--warmup 20000] [--rows process,floor,octokit,handle,webStandard] [--write]
//   (rows may also name stripe, svix and processOtelNoop, `process` with `telemetry: openTelemetry()` from the
//   otel.js beside --core's index.js, no SDK registered; --write replaces the "## Instructions per delivery (callgrind)"
//   section of BENCHMARKS.md, unless BENCH_NO_WRITE is set)
//   (inside valgrind) node --predictable --hash-seed=1 --random-seed=1 bench/callgrind.mjs --row process --iterations 20000
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ROWS, loadOtel, loadPeers, makeContenders } from './lib/contenders.mjs';
import { coreBuild, date, fmt, load, machine, writeSection } from './lib/report.mjs';
import { loadCore } from './lib/load-core.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    row: { type: 'string' },
    rows: { type: 'string', default: 'process,processNoStore,floor,octokit,handle,webStandard' },
    iterations: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '20000' },
    core: { type: 'string', default: path.join(here, '../packages/core/dist') },
    write: { type: 'boolean', default: false },
  },
});
const iterations = Number(values.iterations);
const warmup = Number(values.warmup);
// Fixed seeds: V8 otherwise picks a random hash seed per process, and the counts of Map- and
// property-heavy rows (Octokit's) then move by several percent from run to run.
const NODE_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1'];
const HEADING = '## Instructions per delivery (callgrind)';

if (values.row) {
  // One measured run, inside valgrind.
  const core = await loadCore(values.core);
  const adapter = await import(pathToFileURL(path.join(values.core, 'adapter.js')).href);
  const peers = values.row === 'stripe' || values.row === 'svix' ? await loadPeers() : undefined;
  // Only the telemetry row loads the otel entry (and @opentelemetry/api): the others run without it, as an app without it would.
  const otel = values.row === 'processOtelNoop' ? await loadOtel(values.core) : undefined;
  const contenders = makeContenders({ core, adapter, otel, peers });
  const run = contenders[values.row](values.row);
  for (let i = 0; i < warmup; i++) await run();
  for (let i = 0; i < iterations; i++) await run();
  const c = contenders.counts[values.row];
  if (c.handled !== warmup + iterations)
    throw new Error(`[bench] ${values.row}: the handler ran ${c.handled} times for ${c.calls} deliveries`);
} else {
  const rows = values.rows.split(',');
  const unknown = rows.filter((r) => !ROWS[r]);
  if (unknown.length) throw new Error(`[bench] no such row: ${unknown.join(', ')} (rows: ${Object.keys(ROWS).join(', ')})`);
  if (rows.includes('processOtelNoop') && !existsSync(path.join(values.core, 'otel.js'))) {
    throw new Error(
      `[bench] processOtelNoop: ${path.join(values.core, 'otel.js')} is missing: this build of @payhook/core has no /otel entry (builds before it, such as 94c9b64, have none)`,
    );
  }
  const loadStart = load();
  const count = (row, n) => {
    const out = spawnSync(
      'valgrind',
      [
        '--tool=callgrind',
        '--callgrind-out-file=/dev/null',
        process.execPath,
        ...NODE_FLAGS,
        fileURLToPath(import.meta.url),
        '--row',
        row,
        '--iterations',
        String(n),
        '--warmup',
        String(warmup),
        '--core',
        values.core,
      ],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    const m = /Collected : (\d+)/.exec(out.stderr);
    if (out.status !== 0 || !m) throw new Error(`[bench] callgrind run of ${row} failed:\n${out.stderr.slice(-2000)}`);
    return Number(m[1]);
  };
  const perDelivery = {};
  for (const row of rows) {
    const total = count(row, iterations);
    const base = count(row, 0);
    perDelivery[row] = (total - base) / iterations;
    console.log(`${row}: ${Math.round(perDelivery[row])} instructions per delivery (${total} - ${base}, ${iterations} iterations)`);
  }
  const has = (...keys) => keys.every((k) => perDelivery[k]);
  const x = (v) => `${v.toFixed(2)}x`;
  const p = perDelivery;
  const ratios = [
    has('process', 'octokit') &&
      `- process / Octokit \`verifyAndReceive\` (throughput from instructions, Octokit's over process's): **${x(p.octokit / p.process)}** (target >= 1.0x in wall-time throughput)`,
    has('process', 'processOtelNoop') &&
      `- processOtelNoop / process (\`telemetry: openTelemetry()\`, no SDK, over no telemetry): **${x(p.processOtelNoop / p.process)}** (target < 1.10x)`,
    has('process', 'floor') && `- process / floor: **${x(p.floor / p.process)}** (target >= 0.6x)`,
    has('process', 'handle') &&
      `- handle / process, raw (handle's instructions over process's): **${x(p.handle / p.process)}** (target <= 1.5x)`,
    has('process', 'handle', 'webStandard') &&
      `- (handle − webStandard) / process (what handle adds beyond the platform's Request and Response, over process): **${x((p.handle - p.webStandard) / p.process)}** (target <= 1.5x)`,
  ].filter(Boolean);
  console.log(ratios.join('\n'));
  const valgrind = execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim();
  console.log(JSON.stringify({ iterations, warmup, node: process.version, valgrind, perDelivery }));

  if (values.write) {
    const table = [
      '| row | instructions per delivery | ratio to process |',
      '|---|---:|---:|',
      ...rows.map((r) => `| ${ROWS[r].label} | ${fmt(p[r])} | ${p.process ? x(p[r] / p.process) : 'n/a'} |`),
    ];
    writeSection(
      HEADING,
      [
        HEADING,
        '',
        `Generated by \`node bench/callgrind.mjs --write\` on ${date()}. Do not edit by hand: rerun the script.`,
        '',
        `- Machine: ${machine()} (load average at start ${loadStart}, at end ${load()}; instruction counts do not depend on it)`,
        `- Core measured: ${coreBuild(path.resolve(values.core))}`,
        `- ${valgrind} (\`--tool=callgrind\`), Node ${process.version} run as \`node ${NODE_FLAGS.join(' ')}\` (no concurrent JIT or GC threads, fixed hash and random seeds: two runs of a row agreed within 0.2% here; without the seeds Octokit's count moved by up to 8% between runs)`,
        `- Method: for each row, two runs under callgrind with the same ${fmt(warmup)}-delivery warm-up, one then measuring ${fmt(iterations)} deliveries and one measuring none; instructions per delivery = (total − zero-iteration total) / ${fmt(iterations)}, which takes out Node's start-up, the module loading, building the deliveries and the warm-up. The rows and deliveries are bench/lib/contenders.mjs's, the same as bench/core.mjs's (async rows awaited one at a time).`,
        `- valgrind's virtual CPU has no SHA extensions (${shaNi()}), so OpenSSL's HMAC-SHA256 takes a longer path here, and costs more instructions than on the real CPU: rows that are mostly HMAC (the floor, Octokit) weigh more against process than in wall time. Read these beside the wall-time and CPU-time ratios of the Core pipeline section.`,
        '',
        ...table,
        '',
        ...ratios,
        '',
      ].join('\n'),
    );
  }
}

/** Whether this machine's CPU has the SHA extensions valgrind hides, as /proc/cpuinfo says. */
function shaNi() {
  try {
    const flags = /^(flags|Features)\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[2].split(/\s+/) ?? [];
    return flags.includes('sha_ni') || flags.includes('sha2')
      ? "this machine's CPU has them"
      : "this machine's CPU does not have them either";
  } catch {
    return "whether this machine's CPU has them is unknown";
  }
}
