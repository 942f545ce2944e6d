// Asks the registry for the newest version of every peer and dependency of the published packages
// and lists each one payhook's range leaves out: what `npm install <package> <peer>` would install
// today and npm would then call invalid. Run by the release script (it needs the registry), not by
// the offline tests. A newest major held back on purpose is named, with its reason, in
// scripts/peers-held-back.json; it is reported, and does not fail the check.
//
// PAYHOOK_PEERS_LATEST='{"name":"version",…}' answers for the registry, and
// PAYHOOK_PEERS_HELD_BACK='{"name":"reason",…}' stands for the file (the check's own test).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

const root = join(import.meta.dirname, '..');
const heldBack = JSON.parse(process.env.PAYHOOK_PEERS_HELD_BACK ?? readFileSync(join(root, 'scripts', 'peers-held-back.json'), 'utf8'));
const given = process.env.PAYHOOK_PEERS_LATEST ? JSON.parse(process.env.PAYHOOK_PEERS_LATEST) : undefined;
const latest = new Map();
const latestOf = (name) => {
  if (!latest.has(name)) {
    latest.set(name, given ? given[name] : execFileSync('npm', ['view', name, 'version'], { encoding: 'utf8' }).trim());
  }
  return latest.get(name);
};

const outside = [];
const held = [];
const packagesDir = process.env.PAYHOOK_PEERS_PACKAGES ?? join(root, 'packages');
for (const dir of readdirSync(packagesDir)) {
  const pkg = JSON.parse(readFileSync(join(packagesDir, dir, 'package.json'), 'utf8'));
  if (pkg.private) continue;
  for (const kind of ['peerDependencies', 'dependencies']) {
    for (const [name, range] of Object.entries(pkg[kind] ?? {})) {
      if (range.startsWith('workspace:')) continue;
      const newest = latestOf(name);
      if (newest === undefined || semver.satisfies(newest, range)) continue;
      const line = `${pkg.name}: ${kind === 'peerDependencies' ? 'peer' : 'dependency'} ${name} ${range} leaves out ${newest}, npm's latest`;
      if (heldBack[name]) held.push(`${line} (held back: ${heldBack[name]})`);
      else outside.push(line);
    }
  }
}
for (const line of held) console.log(`note ${line}`);
if (outside.length) {
  for (const line of outside) console.error(`FAIL ${line}`);
  console.error(
    `[payhook] ${outside.length} range(s) leave out npm's latest: widen each to the new major and run the matrix on it (vitest.config.ts, lowest-peers), or name it in scripts/peers-held-back.json with the reason.`,
  );
  process.exit(1);
}
console.log(
  `ok   every peer and dependency range covers npm's latest (${latest.size} asked${held.length ? `, ${held.length} held back` : ''})`,
);
