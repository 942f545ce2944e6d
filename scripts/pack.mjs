// `pnpm pack:all`: packs every publishable package into one folder (default `packs/`), as
// `pnpm publish` would ship it (`workspace:^` rewritten to the version), so an app can install
// payhook from a clone before it is on npm. Build first (`pnpm pack:all` does).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = join(import.meta.dirname, '..');
const dest = resolve(process.argv[2] ?? join(root, 'packs'));
rmSync(dest, { recursive: true, force: true });
mkdirSync(dest, { recursive: true });
execFileSync(join(root, 'node_modules', '.bin', 'pnpm'), ['-r', '--filter', './packages/*', 'pack', '--pack-destination', dest], {
  cwd: root,
  stdio: 'pipe',
});
const tarballs = readdirSync(dest)
  .filter((f) => f.endsWith('.tgz'))
  .sort();
console.log(`[payhook] packed ${tarballs.length} packages into ${dest}:`);
for (const t of tarballs) console.log(`  ${t}`);
console.log('\nIn your app, install the ones you use, with those they depend on, in one command; for example:');
const pick = (name) => join(dest, tarballs.find((t) => t.startsWith(`payhook-${name}-`)) ?? `payhook-${name}.tgz`);
console.log(`  npm install ${pick('core')} ${pick('express')}`);
