// The hand-written mutants of one group (scripts/hand-mutants.mjs), one at a time: write the
// change, rebuild what loads it from dist/, run the named tests, put the file back. A mutant whose
// tests all pass survived. The report has the shape of Stryker's JSON, so one table reads both.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { HAND_MUTANTS } from './hand-mutants.mjs';

/** The exit status of the named test files' run, on the newest peers, services required. */
const vitest = (tests, project = 'payhook') =>
  spawnSync('npx', ['vitest', 'run', '--project', project, '--bail', '1', ...tests], {
    stdio: 'ignore',
    env: { ...process.env, PAYHOOK_REQUIRE_SERVICES: '1' },
  }).status;
const pnpm = (args) => spawnSync('npx', ['-y', 'pnpm@10.34.8', ...args], { stdio: 'ignore' });

/** Runs `group`'s hand mutants; writes reports/mutation/<group>-hand.json; true when each was killed. */
export function runHandMutants(group) {
  const mutants = HAND_MUTANTS[group] ?? [];
  if (mutants.length === 0) return true;
  // A mutant counts as killed only when its tests pass without it.
  for (const run of new Set(mutants.map((m) => `${m.project ?? 'payhook'} ${m.tests.join(' ')}`))) {
    const [project, ...tests] = run.split(' ');
    if (vitest(tests, project) !== 0)
      throw new Error(`[payhook] ${tests} fail without any mutant; make them pass before judging mutants by them.`);
  }
  const files = {};
  for (const [i, m] of mutants.entries()) {
    const original = readFileSync(m.file, 'utf8');
    const at = original.indexOf(m.from);
    if (at < 0 || original.indexOf(m.from, at + 1) >= 0) {
      throw new Error(
        `[payhook] hand mutant ${i + 1} (${m.why}) must match once in ${m.file}; fix its 'from' in scripts/hand-mutants.mjs.`,
      );
    }
    const restore = () => {
      writeFileSync(m.file, original);
      if (m.build) pnpm(['--filter', m.build, 'build']);
    };
    const onSignal = () => {
      restore();
      process.exit(130);
    };
    process.once('SIGINT', onSignal);
    const started = Date.now();
    let status;
    try {
      writeFileSync(m.file, original.slice(0, at) + m.to + original.slice(at + m.from.length));
      if (m.build && pnpm(['--filter', m.build, 'build']).status !== 0)
        throw new Error(`[payhook] could not build ${m.build} with hand mutant ${i + 1}.`);
      status = vitest(m.tests, m.project) === 0 ? 'Survived' : 'Killed';
    } finally {
      restore();
      process.off('SIGINT', onSignal);
    }
    const line = original.slice(0, at).split('\n').length;
    console.log(
      `[payhook] hand mutant ${i + 1}/${mutants.length} ${status.toLowerCase()} in ${Math.round((Date.now() - started) / 1000)} s: ${m.file}:${line}, ${m.why}`,
    );
    (files[m.file] ??= { mutants: [] }).mutants.push({
      id: `hand-${i + 1}`,
      status,
      description: m.why,
      location: { start: { line, column: 1 } },
    });
  }
  mkdirSync('reports/mutation', { recursive: true });
  writeFileSync(`reports/mutation/${group}-hand.json`, JSON.stringify({ schemaVersion: '1', files }, null, 2));
  return Object.values(files).every((f) => f.mutants.every((m) => m.status === 'Killed'));
}
