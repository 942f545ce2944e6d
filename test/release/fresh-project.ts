// A project outside the workspace that installs the packed tarballs with plain npm, as an app
// would: what `pnpm publish` ships, without the workspace's links, paths or hoisting.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const run = promisify(execFile);

/** The environment of a process in the fresh project: no NODE_PATH (pnpm and vitest set one) that
 * would let it find the workspace's node_modules. */
export const outside = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => k !== 'NODE_PATH' && !/^npm_(package|lifecycle)_/.test(k)),
) as NodeJS.ProcessEnv;

export interface FreshProject {
  dir: string;
  packs: string;
  /** Each packed package, read once: its tarball, shipped manifest and files. */
  packages: Packed[];
  /** Every public entry of every package: `@payhook/core`, `@payhook/core/node`, … */
  entries: string[];
}

/** Packs every package (scripts/pack.mjs) and installs all tarballs into a new project with npm. */
export async function freshProject(): Promise<FreshProject> {
  const base = mkdtempSync(join(tmpdir(), 'payhook-release-'));
  const packs = join(base, 'packs');
  const dir = join(base, 'app');
  await run(process.execPath, [join(root, 'scripts/pack.mjs'), packs], { cwd: root });
  const tarballs = readdirSync(packs)
    .filter((f) => f.endsWith('.tgz'))
    .map((f) => join(packs, f));
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true }, null, 2));
  // Versions the workspace type-checks with, and the optional peers some entries load
  // (`@payhook/core/otel`, `@payhook/testing/store` and `/ledger`); the frameworks and engines
  // come as peers, at the versions npm picks.
  // The lowest TypeScript payhook supports and TypeScript 7 (npm's latest) under aliases beside 5.9,
  // whose `tsc` keeps the bin name; @types/pg, as the store-postgres README asks of TypeScript users.
  const tools = [
    'typescript@5.9.3',
    'typescript-lowest@npm:typescript@5.0.4',
    'typescript7@npm:typescript@7.0.2',
    '@types/node@20.19.43',
    '@types/pg@8.23.1',
    '@types/express@5.0.4',
    '@opentelemetry/api@1.9.1',
    'vitest@4.1.12',
  ];
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, ...tools], {
    cwd: dir,
    env: outside,
    maxBuffer: 16 * 1024 * 1024,
  });
  const packages = tarballs.map((tarball) => ({ tarball, manifest: tarballManifest(tarball), files: tarballFiles(tarball) }));
  const entries: string[] = [];
  for (const { manifest } of packages) {
    for (const sub of Object.keys(manifest.exports as Record<string, unknown>)) {
      if (sub !== './package.json') entries.push(sub === '.' ? manifest.name : `${manifest.name}/${sub.slice(2)}`);
    }
  }
  return { dir, packs, packages, entries: entries.sort() };
}

export interface Manifest {
  name: string;
  version: string;
  [field: string]: unknown;
}

export interface Packed {
  tarball: string;
  manifest: Manifest;
  files: string[];
}

const tarballFiles = (tarball: string): string[] =>
  execFileSyncText('tar', ['tzf', tarball])
    .split('\n')
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ''));

const tarballManifest = (tarball: string): Manifest => JSON.parse(execFileSyncText('tar', ['xzf', tarball, '-O', 'package/package.json']));

function execFileSyncText(file: string, args: string[]): string {
  return execFileSync(file, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
}

/** The README's code block that follows `heading` (the first ```ts block after it). */
export function readmeBlock(heading: string): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const at = readme.indexOf(heading);
  if (at < 0) throw new Error(`README.md has no "${heading}"`);
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!match) throw new Error(`README.md has no ts block after "${heading}"`);
  return match[1]!;
}
