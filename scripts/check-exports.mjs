// Lints every publishable package's `exports` map with publint and attw, as a published tarball
// would be resolved, under every resolution attw knows: node10 (TypeScript's `moduleResolution:
// "node"`, the default for `module: commonjs`, which ignores `exports` and reads `typesVersions`),
// node16 from CJS and from ESM, and bundler.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const bin = (name) => join(import.meta.dirname, '..', 'node_modules', '.bin', name);
const failed = [];
for (const dir of readdirSync('packages')) {
  const cwd = join('packages', dir);
  const pkg = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8'));
  if (pkg.private) continue;
  for (const [tool, args] of [
    ['publint', ['--strict']],
    ['attw', ['--pack', '.', '--format', 'table-flipped']],
  ]) {
    try {
      execFileSync(bin(tool), args, { cwd, stdio: 'pipe' });
      console.log(`ok   ${tool} ${pkg.name}`);
    } catch (error) {
      failed.push(`${tool} ${pkg.name}`);
      console.error(`FAIL ${tool} ${pkg.name}\n${error.stdout}${error.stderr}`);
    }
  }
}
if (failed.length) {
  console.error(`[payhook] exports check failed for: ${failed.join(', ')}`);
  process.exit(1);
}
