// Versioning with changesets, tried on a copy of the workspace's manifests: a minor change to one
// package moves the twelve together to the next minor (the `fixed` group), writes each changelog,
// leaves private packages alone, and keeps every internal range satisfied.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { root, run } from './fresh-project.js';

const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, any>;
const workspaceDirs = () =>
  ['packages', 'examples', 'test/runtimes']
    .flatMap((parent) => readdirSync(join(root, parent)).map((d) => `${parent}/${d}`))
    .concat(['bench', 'test/runtimes']);

it('a minor changeset moves every package to the next minor together, and nothing to 1.0', async () => {
  const copy = mkdtempSync(join(tmpdir(), 'payhook-changesets-'));
  for (const f of ['package.json', 'pnpm-workspace.yaml', '.changeset']) cpSync(join(root, f), join(copy, f), { recursive: true });
  for (const dir of workspaceDirs()) {
    if (!existsSync(join(root, dir, 'package.json'))) continue;
    mkdirSync(join(copy, dir), { recursive: true });
    cpSync(join(root, dir, 'package.json'), join(copy, dir, 'package.json'));
  }
  const before = manifest(join(copy, 'packages/core')).version as string;
  const [major, minor] = before.split('.').map(Number);
  const next = `${major}.${minor! + 1}.0`;
  writeFileSync(join(copy, '.changeset/sample-change.md'), '---\n"@payhook/core": minor\n---\n\nA sample change to the core.\n');

  await run(join(root, 'node_modules/.bin/changeset'), ['version'], { cwd: copy });

  for (const dir of readdirSync(join(copy, 'packages'))) {
    const pkg = manifest(join(copy, 'packages', dir));
    expect(pkg.version, pkg.name).toBe(next);
    expect(readFileSync(join(copy, 'packages', dir, 'CHANGELOG.md'), 'utf8'), pkg.name).toContain(`## ${next}`);
    // The workspace ranges of @payhook/* still hold the new version (pnpm rewrites them at publish).
    for (const range of Object.entries({ ...pkg.dependencies, ...pkg.peerDependencies })
      .filter(([n]) => n.startsWith('@payhook/'))
      .map(([, r]) => r as string)) {
      expect(range, pkg.name).toMatch(/^workspace:(\^|>=\d+\.\d+\.\d+ <1\.0\.0)$/);
    }
  }
  expect(readFileSync(join(copy, 'packages/core/CHANGELOG.md'), 'utf8')).toContain('A sample change to the core.');
  for (const dir of ['examples/shop', 'examples/express', 'bench'])
    expect(manifest(join(copy, dir)), dir).toEqual(manifest(join(root, dir)));
  expect(existsSync(join(copy, '.changeset/sample-change.md'))).toBe(false);
}, 60_000);
