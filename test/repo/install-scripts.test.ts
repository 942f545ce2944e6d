// The README promises `pnpm install` without pnpm's "Ignored build scripts" box: every installed
// package with an install script is named in pnpm-workspace.yaml, as one to build
// (onlyBuiltDependencies) or one to skip (ignoredBuiltDependencies). A new dependency that brings
// a script fails here, instead of in a new user's terminal.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const store = join(root, 'node_modules/.pnpm');

/** The names listed under `key:` in pnpm-workspace.yaml: its `  - name` lines, up to the next key. */
function listed(key: string): string[] {
  const lines = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8').split('\n');
  const names: string[] = [];
  for (const line of lines.slice(lines.indexOf(`${key}:`) + 1)) {
    const item = /^ {2}- (\S+)$/.exec(line);
    if (!item) break;
    names.push(item[1]!);
  }
  return lines.includes(`${key}:`) ? names : [];
}

/** Every package pnpm installed that has its own install script (what pnpm asks approval for). */
function withInstallScripts(): string[] {
  const found = new Set<string>();
  for (const dir of readdirSync(store)) {
    const modules = join(store, dir, 'node_modules');
    if (!existsSync(modules)) continue;
    for (const scopeOrName of readdirSync(modules)) {
      for (const name of scopeOrName.startsWith('@')
        ? readdirSync(join(modules, scopeOrName)).map((n) => `${scopeOrName}/${n}`)
        : [scopeOrName]) {
        const manifest = join(modules, name, 'package.json');
        if (!existsSync(manifest)) continue;
        const { scripts = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as { scripts?: Record<string, string> };
        const own =
          ['preinstall', 'install', 'postinstall'].some((s) => scripts[s] !== undefined) || existsSync(join(modules, name, 'binding.gyp'));
        if (own) found.add(name);
      }
    }
  }
  return [...found].sort();
}

describe('pnpm install', () => {
  it('meets no install script pnpm-workspace.yaml does not name, so it prints no "Ignored build scripts" box', () => {
    const named = new Set([...listed('onlyBuiltDependencies'), ...listed('ignoredBuiltDependencies')]);
    const scripts = withInstallScripts();
    expect(scripts.length).toBeGreaterThan(0);
    expect(scripts.filter((name) => !named.has(name))).toEqual([]);
  });
});
