// Instructions per delivery, counted by valgrind's callgrind: they repeat to within about 1% however
// loaded the machine is, unlike wall time. For each row, node runs under callgrind twice with the
// same warm-up, once measuring `--iterations` deliveries and once none; the difference divided by
// the iterations is the row's cost. Node runs with --predictable (no concurrent JIT or GC threads).
// valgrind's CPU has no SHA extensions, so HMAC costs more instructions here than on the real CPU:
// give wall-time ratios (bench/core.mjs) beside these.
//
//   node bench/callgrind.mjs [--iterations 20000] [--warmup 20000] [--rows process,floor,octokit,handle,webStandard]
//   (inside valgrind) node --predictable bench/callgrind.mjs --row process --iterations 20000
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { makeContenders } from './lib/contenders.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    row: { type: 'string' },
    rows: { type: 'string', default: 'process,floor,octokit,handle,webStandard' },
    iterations: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '20000' },
    core: { type: 'string', default: path.join(here, '../packages/core/dist') },
  },
});
const iterations = Number(values.iterations);
const warmup = Number(values.warmup);

if (values.row) {
  // One measured run, inside valgrind.
  const core = await import(pathToFileURL(path.join(values.core, 'index.js')).href);
  const adapter = await import(pathToFileURL(path.join(values.core, 'adapter.js')).href);
  const contenders = makeContenders({ core, adapter });
  const run = contenders[values.row](values.row);
  for (let i = 0; i < warmup; i++) await run();
  for (let i = 0; i < iterations; i++) await run();
  const c = contenders.counts[values.row];
  if (c.handled !== warmup + iterations) throw new Error(`[bench] ${values.row}: the handler ran ${c.handled} times for ${c.calls} deliveries`);
} else {
  const count = (row, n) => {
    const out = spawnSync(
      'valgrind',
      ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--predictable', fileURLToPath(import.meta.url),
        '--row', row, '--iterations', String(n), '--warmup', String(warmup), '--core', values.core],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    const m = /Collected : (\d+)/.exec(out.stderr);
    if (out.status !== 0 || !m) throw new Error(`[bench] callgrind run of ${row} failed:\n${out.stderr.slice(-2000)}`);
    return Number(m[1]);
  };
  const perDelivery = {};
  for (const row of values.rows.split(',')) {
    const total = count(row, iterations);
    const base = count(row, 0);
    perDelivery[row] = (total - base) / iterations;
    console.log(`${row}: ${Math.round(perDelivery[row])} instructions per delivery (${total} - ${base}, ${iterations} iterations)`);
  }
  const ratio = (a, b) => (perDelivery[a] && perDelivery[b] ? (perDelivery[b] / perDelivery[a]).toFixed(2) + 'x' : 'n/a');
  console.log(`throughput from instructions: process / Octokit ${ratio('process', 'octokit')}, process / floor ${ratio('process', 'floor')}, handle / process ${ratio('handle', 'process')} (handle is ${perDelivery.handle && perDelivery.process ? (perDelivery.handle / perDelivery.process).toFixed(2) : 'n/a'}x the instructions of process)`);
  console.log(JSON.stringify({ iterations, warmup, node: process.version, valgrind: execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim(), perDelivery }));
}
