// Every TypeScript sample of the README and the guides compiles against the built packages, as an
// app would get them (issue 56); those marked `<!-- sample: run -->` also run to a clean exit.
// docs/snippets/*.ts run in test/repo/snippets.test.ts. Markers, alone on the line above a fence:
//   <!-- sample: run -->            checked, then run with tsx from a project beside the packages
//   <!-- sample: skip (reason) -->  not checked: a deliberate fragment, with its reason
import { type ExecFileException, execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Problem, type SampleProject, typeCheck, writeProject } from './samples/check.js';
import { allSamples } from './samples/extract.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const { samples, bad } = allSamples(root);
const checked = samples.filter((s) => s.mode !== 'skip');
const runnable = checked.filter((s) => s.mode === 'run');
let project: SampleProject;
let problems: Problem[];

beforeAll(() => {
  project = writeProject(root, checked);
  problems = typeCheck(project, checked);
}, 120_000);
afterAll(() => {
  if (project) rmSync(project.dir, { recursive: true, force: true });
});

describe('the guides’ TypeScript samples', () => {
  it('finds the samples, and reads every sample marker', () => {
    expect(checked.length).toBeGreaterThan(20);
    expect(bad.map((b) => `${b.file}:${b.line} ${b.text}`)).toEqual([]);
  });

  it('type-checks the prelude and the packages’ own types', () => {
    expect(problems.filter((p) => !p.sample).map((p) => p.text)).toEqual([]);
  });

  it.each(checked.map((s) => [`${s.file}:${s.line}`, s] as const))('%s type-checks', (_, sample) => {
    const mine = problems.filter((p) => p.sample === sample).map((p) => p.text);
    expect(mine, `${sample.file}:${sample.line}: fix the block, or mark it <!-- sample: skip (reason) -->`).toEqual([]);
  });

  it.runIf(runnable.length > 0).each(runnable.map((s) => [`${s.file}:${s.line}`, s] as const))(
    '%s runs to a clean exit',
    async (_, sample) => {
      const file = project.files[checked.indexOf(sample)]!;
      const failure = await promisify(execFile)(`${root}node_modules/.bin/tsx`, [file], { cwd: project.dir, timeout: 30_000 }).then(
        () => undefined,
        (error: ExecFileException & { stderr: string }) =>
          `${error.killed ? 'still running after 30 s' : `exited with ${error.code ?? error.signal}`}\n${error.stderr}`,
      );
      expect(failure, `${sample.file}:${sample.line}`).toBeUndefined();
    },
    40_000,
  );
});
