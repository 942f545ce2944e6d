// The mutation run is weekly, not in .ci/run: these checks keep it runnable between runs. A change
// to a Lua script or a SQL statement that moves a hand mutant's text, a renamed file or test, or a
// group missing from the workflow fails here, on the push that causes it, not a week later.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript, run by node as it is
import { HAND_MUTANTS } from '../../scripts/hand-mutants.mjs';
// @ts-expect-error plain JavaScript, run by node as it is
import { MUTATION_GROUPS } from '../../scripts/mutation-groups.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
type Group = { mutate: string[]; tests: string[] };
type HandMutant = { file: string; from: string; to: string; why: string; tests: string[]; build?: string; project?: string };
const groups = MUTATION_GROUPS as Record<string, Group>;
const hand = HAND_MUTANTS as Record<string, HandMutant[]>;

/** `a/{b,c}.ts` as `a/b.ts` and `a/c.ts`. */
const braces = (glob: string): string[] => {
  const m = /\{([^}]*)\}/.exec(glob);
  return m ? m[1]!.split(',').flatMap((part) => braces(glob.slice(0, m.index) + part + glob.slice(m.index + m[0].length))) : [glob];
};
/** The repository's files a glob (`*`, `**`, braces) matches. */
function matches(glob: string): string[] {
  const base = glob.slice(0, glob.search(/[*{]|$/)).replace(/[^/]*$/, '');
  const pattern = new RegExp(
    `^${braces(glob)
      .map((g) =>
        g
          .replace(/[.+^$()|[\]\\]/g, '\\$&')
          .replace(/\*\*\//g, '@@')
          .replace(/\*/g, '[^/]*')
          .replace(/@@/g, '(?:.*/)?'),
      )
      .join('|')}$`,
  );
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (e.name === 'node_modules' ? [] : walk(join(dir, e.name))) : [relative(root, join(root, dir, e.name))],
    );
  return walk(base).filter((f) => pattern.test(f.split('\\').join('/')));
}

describe('the mutation groups (scripts/mutation-groups.mjs)', () => {
  it.each(Object.entries(groups))('%s: every file it mutates and every test it runs exists', (_, group) => {
    for (const glob of [...group.mutate, ...group.tests].filter((g) => !g.startsWith('!'))) expect(matches(glob), glob).not.toEqual([]);
  });

  it('are each a job of the weekly workflow', () => {
    const workflow = readFileSync(join(root, '.github/workflows/mutation.yml'), 'utf8');
    const matrix = /group: \[([^\]]*)\]/
      .exec(workflow)?.[1]
      ?.split(',')
      .map((g) => g.trim());
    expect(matrix?.sort()).toEqual(Object.keys(groups).sort());
  });
});

describe('the hand-written mutants (scripts/hand-mutants.mjs)', () => {
  const all = Object.entries(hand).flatMap(([group, list]) => list.map((m) => ({ group, ...m })));

  it('belong to groups that exist', () => {
    expect(Object.keys(hand).filter((g) => !(g in groups))).toEqual([]);
  });

  it.each(all.map((m) => [`${m.file}: ${m.why}`, m] as const))('%s: its text is in the file once, and its tests exist', (_, m) => {
    expect(readFileSync(join(root, m.file), 'utf8').split(m.from)).toHaveLength(2);
    expect(m.to).not.toBe(m.from);
    for (const test of m.tests) expect(matches(test), test).toEqual([test]);
  });
});
