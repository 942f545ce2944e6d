// Lints every publishable package's `exports` map with publint and attw, as a published tarball
// would be resolved, under every resolution attw knows: node10 (TypeScript's `moduleResolution:
// "node"`, the default for `module: commonjs`, which ignores `exports` and reads `typesVersions`),
// node16 from CJS and from ESM, and bundler.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const bin = (name) => join(import.meta.dirname, '..', 'node_modules', '.bin', name);
const checks = [];
for (const dir of readdirSync('packages')) {
  const cwd = join('packages', dir);
  const pkg = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8'));
  if (pkg.private) continue;
  checks.push({ tool: 'publint', args: ['--strict'], cwd, name: pkg.name });
  checks.push({ tool: 'attw', args: ['--pack', '.', '--format', 'table-flipped'], cwd, name: pkg.name });
}
// Each check is a process of its own that waits on npm pack and the disk as much as it computes:
// as many at once as there are cores, which takes about half the time of one at a time.
const failed = [];
const next = checks.values();
async function lane() {
  for (const { tool, args, cwd, name } of next) {
    try {
      await promisify(execFile)(bin(tool), args, { cwd, maxBuffer: 16 * 1024 * 1024 });
      console.log(`ok   ${tool} ${name}`);
    } catch (error) {
      failed.push(`${tool} ${name}`);
      console.error(`FAIL ${tool} ${name}\n${error.stdout}${error.stderr}`);
    }
  }
}
await Promise.all(Array.from({ length: availableParallelism() }, lane));
if (failed.length) {
  console.error(`[payhook] exports check failed for: ${failed.join(', ')}`);
  process.exit(1);
}
