// `pnpm check:exports` (scripts/check-exports.mjs): publint and attw over every publishable
// package's exports map, as its tarball would resolve. The test command runs it here, beside the
// other suites, instead of in line before them: it is some 40 s of packing and type resolution.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { root, run } from './fresh-project.js';

const publishable = readdirSync(join(root, 'packages'))
  .map((dir) => JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) as { name: string; private?: boolean })
  .filter((pkg) => !pkg.private)
  .map((pkg) => pkg.name);

it('every publishable package passes publint --strict, and attw under every resolution it knows', async () => {
  const { stdout } = await run(process.execPath, [join(root, 'scripts/check-exports.mjs')], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout: string; stderr: string }) => {
    throw new Error(`check:exports failed:\n${error.stderr}\n${error.stdout}`);
  });
  expect(publishable.length).toBeGreaterThan(10);
  for (const name of publishable) {
    expect(stdout, name).toContain(`ok   publint ${name}\n`);
    expect(stdout, name).toContain(`ok   attw ${name}\n`);
  }
}, 300_000);
