// The "## Core pipeline" section of BENCHMARKS.md, from what bench/core.mjs measured.
import { N, STORE_MAX } from './contenders.mjs';
import { GROUPS } from './core-profile.mjs';
import { fmtNs, fmtOps } from './measure.mjs';
import { date, load, machine } from './report.mjs';

const x = (v) => `${v.toFixed(2)}x`;
const pct = (v) => `${(v * 100).toFixed(0)}%`;
const tx = (v) => `${v.toFixed(1)}x`;
const verdict = (met) => (met ? '**met**' : '**missed**');

/**
 * Time ratios (ns over ns) as the targets read them, from per-delivery times `t` (wall or CPU):
 * throughput of process over Octokit's and the floor's; handle's time over process's, raw and net
 * of what the platform's Request and Response cost alone (the webStandard row).
 */
export function targetRatios(t, targets) {
  const r = {
    octokit: t.octokit / t.process,
    floor: t.floor / t.process,
    handleRaw: t.handle / t.process,
    handleNet: (t.handle - t.webStandard) / t.process,
  };
  const met = {
    octokit: r.octokit >= targets.octokit,
    floor: r.floor >= targets.floor,
    handleRaw: r.handleRaw <= targets.handle,
    handleNet: r.handleNet <= targets.handle,
  };
  return { ...r, met };
}

/** The table, the ratios and the notes: what the script prints, and the body of the section. */
export function coreFindings({ rows, results, targets, wall, cpu, pieces, profileShares, handleProfile }) {
  const table = [
    '| row | mean / iter | p50 | p99 | ops/s | |',
    '|---|---:|---:|---:|---:|---|',
    ...rows.map((row) => {
      const r = results[row.key];
      return `| ${row.label} | ${fmtNs(r.avg)} | ${fmtNs(r.p50)} | ${fmtNs(r.p99)} | ${fmtOps(r.avg)} | ${row.kind} |`;
    }),
  ];
  const t = (k) => results[k].avg;
  const ratios = [
    `- process / Octokit \`verifyAndReceive\` (throughput): **${x(wall.octokit)}**, target >= ${tx(targets.octokit)}: ${verdict(wall.met.octokit)}`,
    `- process / floor (throughput): **${x(wall.floor)}**, target >= ${tx(targets.floor)}: ${verdict(wall.met.floor)}`,
    `- handle / process, raw (time of \`handle(Request)\` over time of \`process\` on the same bytes, the platform's Request and Response included): **${x(wall.handleRaw)}**, target <= ${tx(targets.handle)}: ${verdict(wall.met.handleRaw)}`,
    `- (handle − webStandard) / process (what \`handle\` adds beyond building and reading a Request and a Response, over \`process\`): **${x(wall.handleNet)}**, target <= ${tx(targets.handle)}: ${verdict(wall.met.handleNet)}; webStandard alone is ${fmtNs(t('webStandard'))}, ${pct(t('webStandard') / t('handle'))} of handle`,
    `- against the other peers (throughput, no target): process / stripe \`constructEvent\` **${x(t('stripe') / t('process'))}**, process / svix \`verify\` **${x(t('svix') / t('process'))}** (floor / stripe ${x(t('stripe') / t('floor'))}, floor / svix ${x(t('svix') / t('floor'))})`,
    `- informative: process with a string body / with a Buffer body (throughput): ${x(t('process') / t('processString'))}; floor string / Buffer: ${x(t('floor') / t('floorString'))}`,
    ...telemetryText(results, cpu),
    `- cross-check on CPU time (process.cpuUsage; process, ${results.processOtelNoop ? 'processOtelNoop, ' : ''}floor and Octokit interleaved in chunks of 1500 iterations, then handle with webStandard, then the peers; median of 40 chunks): ${Object.entries(
      cpu.perDelivery,
    )
      .map(([k, v]) => `${k} ${fmtNs(v)}`)
      .join(
        ', ',
      )} per delivery; process / Octokit ${x(cpu.octokit)}, process / floor ${x(cpu.floor)}, handle / process raw ${x(cpu.handleRaw)}, (handle − webStandard) / process ${x(cpu.handleNet)}`,
  ];
  return [
    ...table,
    '',
    ...ratios,
    ...piecesText(pieces, t('process')),
    ...boundsText(profileShares, cpu, wall, targets),
    ...handleText(handleProfile),
  ];
}

/** What `telemetry: openTelemetry()` adds with no SDK registered (the no-op tracer and meter): the issue's target is under 10%. */
function telemetryText(results, cpu) {
  if (!results.processOtelNoop) return [];
  const wall = results.processOtelNoop.avg / results.process.avg;
  const c = cpu.perDelivery;
  const onCpu = c.processOtelNoop && c.process ? `; on CPU time ${x(c.processOtelNoop / c.process)}` : '';
  return [
    `- telemetry: processOtelNoop / process (time with \`telemetry: openTelemetry()\` and no OpenTelemetry SDK, over time without telemetry): **${x(wall)}** (${wall >= 1 ? '+' : '−'}${(Math.abs(wall - 1) * 100).toFixed(1)}%), target < 1.10x: ${verdict(wall < 1.1)}${onCpu}`,
  ];
}

function piecesText(pieces, pipe) {
  if (!pieces) return [];
  const { rows, results, notes, commonPath } = pieces;
  const sum = commonPath.filter((k) => results[k]).reduce((s, k) => s + results[k].avg, 0);
  return [
    '',
    '### The pipeline in pieces',
    '',
    `Each piece alone on the same payloads (one mitata pass), with its share of the pipeline's mean (\`process\`, ${fmtNs(pipe)}).`,
    "Pieces alone run hotter in cache than inside the pipeline. The pipeline claims and completes through the store's",
    'synchronous view, so the store piece (two awaits through the public API) overstates what the pipeline pays for it.',
    '',
    '| piece | mean / iter | share of pipeline |',
    '|---|---:|---:|',
    ...rows.map((row) => `| ${row.label} | ${fmtNs(results[row.key].avg)} | ${pct(results[row.key].avg / pipe)} |`),
    '',
    `The common path's pieces (${commonPath
      .filter((k) => results[k])
      .map((k) => k.slice(2))
      .join(
        ', ',
      )}) add up to ${fmtNs(sum)}, ${pct(sum / pipe)} of the pipeline; the rest is its glue (intake, the router, the report and result objects, the awaits of \`process\`).`,
    ...notes.map((n) => `\n${n}`),
  ];
}

function boundsText(shares, cpu, wall, targets) {
  if (!shares) return [];
  const share = (g) => shares.find((p) => p.group === g)?.share ?? 0;
  const floorShare = share(GROUPS.hmac) + share(GROUPS.parse) + share(GROUPS.decode);
  const { perDelivery: c } = cpu;
  const lines = [
    '',
    '### What bounds it',
    '',
    'CPU profile of `process` in a loop (V8 sampling profiler in this process, self time grouped; V8 counts a function it',
    "inlined as its caller's time, so the small steps, the walk and the shape check, may show partly under `parseEvent`):",
    '',
    '| where the time goes | share |',
    '|---|---:|',
    ...shares.map((p) => `| ${p.group} | ${pct(p.share)} |`),
    '',
    `The floor's kind of work (HMAC, decode, and \`parseEvent\` with the JSON.parse it calls) is ${pct(floorShare)} of the pipeline's time; the rest is what the floor does not do (the walk, the shape check, the store, the pipeline's objects and awaits: ${pct(share(GROUPS.core))} in core's other code, ${pct(share(GROUPS.gc))} in GC).`,
  ];
  const need = (name, key, base) => {
    const target = targets[key];
    const goal = base / target;
    const over = c.process - c.floor;
    const drop = over > 0 ? 1 - Math.max(0, goal - c.floor) / over : 0;
    const verdictCpu = cpu.met[key]
      ? 'met on CPU time'
      : goal <= c.floor
        ? 'out of reach on CPU time: that is faster than the floor itself'
        : `on CPU time core would have to drop ${pct(drop)} of what it spends beyond the floor`;
    return `- ${name} target (>= ${tx(target)}): ${x(wall[key])} on wall time, ${x(cpu[key])} on CPU time. It needs \`process\` at ${fmtNs(goal)} of CPU per delivery or less, against ${fmtNs(c.process)} now (floor ${fmtNs(c.floor)}): ${verdictCpu}.`;
  };
  const bullets = [];
  if (!cpu.met.octokit || !wall.met.octokit) bullets.push(need('Octokit', 'octokit', c.octokit));
  if (!cpu.met.floor || !wall.met.floor) bullets.push(need('Floor', 'floor', c.floor));
  if (bullets.length) lines.push('', ...bullets);
  return lines;
}

function handleText(p) {
  if (!p) return [];
  return [
    '',
    '### Where `handle` spends its time',
    '',
    'CPU profile of `handle(new Request(...))` with the Response read, in a loop, self time by package:',
    '',
    '| package | share |',
    '|---|---:|',
    ...p.packages.map((r) => `| ${r.what} | ${pct(r.share)} |`),
  ];
}

/** The whole section: how it was measured, then the findings. */
export function coreSection({ findings, rounds, build, versions, loadStart, sizes }) {
  return [
    '## Core pipeline',
    '',
    `Generated by \`bench/core.mjs\` on ${date()}. Do not edit by hand: rerun the script.`,
    '',
    `- Machine: ${machine()}`,
    `- Node ${process.version} (V8 ${process.versions.v8}); load average at start ${loadStart}, at end ${load()} (1/5/15 min; above the core count means other processes competed for the CPU and the wall-time figures are inflated; the CPU-time cross-check is less affected)`,
    `- Core measured: ${build}`,
    `- Versions: ${Object.entries(versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `- Payload: ${N} distinct \`payment.success\` deliveries of the shape of section 2.1 plus realistic extra fields, ${sizes[0] === sizes[1] ? sizes[0] : sizes.join('-')} bytes each, each signed (\`sha256=\` + hex HMAC-SHA256). Every row cycles through the same ${N} bodies and signatures (bench/lib/contenders.mjs builds the deliveries and the rows, for this script and bench/callgrind.mjs).`,
    `- Handler: every row registers one \`payment.success\` handler doing the same trivial work, and it runs on every iteration (checked: handler runs = iterations for every row). For payhook the memory store is \`memoryStore({ max: ${STORE_MAX} })\`: a key is evicted by LRU after ${STORE_MAX} newer keys and comes round again only after ${N - 1}, so every delivery is claimed, handled and completed, never answered as a duplicate. The eviction is inside the measured time, as it is for a full store in production.`,
    '- Input form: `process` (what the adapters call: `adapterOf(receiver).process({ method, signature, body })`) and the floor get the body as a `Buffer`; `@octokit/webhooks` only accepts a string `payload`, so it gets the same bytes already decoded (its own middleware decodes them before this call; that decode is not timed). The string-body rows show payhook on the same terms.',
    "- `handle` builds a `Request` with the Buffer body, awaits `receiver.handle(request)` and reads the Response's text. `webStandard` is what that costs the platform alone: the same Request built, its body read (`arrayBuffer()`), a Response built and read, no payhook; handle − webStandard is payhook's share of handle.",
    "- Octokit: `new Webhooks({ secret, log })`, `on('payment.success', handler)`, `verifyAndReceive({ id, name: 'payment.success', payload, signature })`. Octokit routes on any `name` string; `on()` with a name outside GitHub's list only logs a warning (silenced through `log`). stripe and svix headers are signed afresh before every measured phase (both allow 5 minutes).",
    `- Figures: the median over ${rounds} round(s) of mitata's mean time per iteration (async rows awaited one at a time, no concurrency). Throughput = 1 / mean. Targets (the issue's): process >= 1.0x Octokit's \`verifyAndReceive\` and >= 0.6x the floor in throughput; \`handle(Request)\` within 1.5x of \`process\` on the same bytes (given raw and net of the platform's cost).`,
    '',
    ...findings,
    '',
  ].join('\n');
}
