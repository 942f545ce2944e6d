import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * vitest's order, except that within each project the files named in `slowest` start first, in
 * that order. On a fresh clone vitest knows no file's duration and starts larger files first, so a
 * short file whose tests take a minute (a Next build, packing every package) could start last and
 * keep a whole tier waiting on it alone; with durations cached, it orders by them as before.
 */
export function slowFirst(slowest: string[]): typeof BaseSequencer {
  return class SlowFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      const rank = (spec: TestSpecification) => {
        const at = slowest.indexOf(relative(this.ctx.config.root, spec.moduleId).split('\\').join('/'));
        return at < 0 ? slowest.length : at;
      };
      // vitest's own order keeps each project's files together: reorder within each run of them.
      const runs: TestSpecification[][] = [];
      for (const spec of sorted) {
        const last = runs.at(-1);
        if (last && last[0]!.project.name === spec.project.name) last.push(spec);
        else runs.push([spec]);
      }
      return runs.flatMap((run) =>
        run
          .map((spec, i) => ({ spec, i }))
          .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
          .map((x) => x.spec),
      );
    }
  };
}
