// `pnpm test:mutation [group …]`: StrykerJS over each group of scripts/mutation-groups.mjs in turn,
// then one table of scores per file from the groups' JSON reports (reports/mutation/<group>.json).
// `pnpm test:mutation --report` prints the table from the last reports without running anything.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { MUTATION_GROUPS } from './mutation-groups.mjs';
import { runHandMutants } from './mutation-hand.mjs';

const args = process.argv.slice(2);
const reportOnly = args.includes('--report');
const names = args.filter((a) => a !== '--report');
for (const name of names) {
  if (!(name in MUTATION_GROUPS)) {
    console.error(`[payhook] no mutation group '${name}'; the groups are ${Object.keys(MUTATION_GROUPS).join(', ')}.`);
    process.exit(2);
  }
}
const groups = names.length > 0 ? names : Object.keys(MUTATION_GROUPS);

let failed = false;
if (!reportOnly) {
  for (const name of groups) {
    const started = Date.now();
    console.log(`\n[payhook] mutation group '${name}'`);
    const run = spawnSync('npx', ['stryker', 'run'], { stdio: 'inherit', env: { ...process.env, PAYHOOK_MUTATION_GROUP: name } });
    console.log(`[payhook] group '${name}' took ${Math.round((Date.now() - started) / 1000)} s`);
    if (run.status !== 0) failed = true;
    if (!runHandMutants(name)) failed = true;
  }
}

/** Each file of a group must reach this score; its survivors each have a written reason in docs/guides/testing/README.md. */
const FLOOR = 90;

/** Stryker's mutation-testing-report-schema statuses, counted per file (the hand mutants' report has the same shape). */
const rows = [];
for (const path of groups.flatMap((name) => [`reports/mutation/${name}.json`, `reports/mutation/${name}-hand.json`])) {
  if (!existsSync(path)) continue;
  const report = JSON.parse(readFileSync(path, 'utf8'));
  const name = path.slice('reports/mutation/'.length, -'.json'.length);
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const count = (...statuses) => mutants.filter((m) => statuses.includes(m.status)).length;
    const killed = count('Killed', 'Timeout');
    const survived = count('Survived');
    const noCoverage = count('NoCoverage');
    const valid = killed + survived + noCoverage;
    rows.push({
      group: name,
      file: name.endsWith('-hand') ? `${file} (by hand)` : file,
      mutants: mutants.length,
      killed,
      survived,
      noCoverage,
      score: valid ? (100 * killed) / valid : 100,
    });
  }
}
if (rows.length === 0) {
  console.error('[payhook] no mutation reports in reports/mutation/; run `pnpm test:mutation` first.');
  process.exit(1);
}
const width = Math.max(...rows.map((r) => r.file.length));
console.log(`\n${'file'.padEnd(width)}  mutants  killed  survived  no cover   score`);
for (const r of rows) {
  console.log(
    `${r.file.padEnd(width)}  ${String(r.mutants).padStart(7)}  ${String(r.killed).padStart(6)}  ${String(r.survived).padStart(8)}  ${String(r.noCoverage).padStart(8)}  ${r.score.toFixed(1).padStart(5)}%${r.score < FLOOR ? '  below 90%: docs/guides/testing/README.md must say why each survivor may stay' : ''}`,
  );
}
process.exit(failed ? 1 : 0);
