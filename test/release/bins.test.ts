// pnpm links every package's bins at install, before any build: a bin that points into dist/
// does not exist yet in a fresh clone, and install warns "Failed to create bin" for each package
// that depends on it. So every bin is a file checked in (it imports the build when it runs).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { root, run } from './fresh-project.js';

it('every bin of every package is a checked-in file, outside dist/', async () => {
  const bins = readdirSync(join(root, 'packages')).flatMap((dir) => {
    const pkg = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
    return Object.values(pkg.bin ?? {}).map((path) => join('packages', dir, path));
  });
  expect(bins.length).toBeGreaterThanOrEqual(2);
  for (const bin of bins) {
    expect(bin).not.toMatch(/\/dist\//);
    await expect(run('git', ['ls-files', '--error-unmatch', bin], { cwd: root }), bin).resolves.toBeTruthy();
  }
});
