#!/usr/bin/env node
// `pnpm docs:build` (issue 56): the docs site from docs/ (VitePress, docs/.vitepress/config.mts),
// then TypeDoc's API reference of every package into its api/ folder (typedoc.json), which the
// site's pages link to. The site is served under DOCS_BASE (default `/`; `/payhook/` on Pages).
//
//   node scripts/docs-build.mjs [out folder, default docs/.vitepress/dist]
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vitepress';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = resolve(process.argv[2] ?? process.env.DOCS_OUT ?? join(root, 'docs/.vitepress/dist'));

await build(join(root, 'docs'), { outDir: out });

// The API reference, from the packages' TSDoc; TypeDoc fails on an export without documentation.
const typedoc = spawnSync(
  process.execPath,
  [join(root, 'node_modules/typedoc/bin/typedoc'), '--options', join(root, 'typedoc.json'), '--out', join(out, 'api')],
  { cwd: root, stdio: 'inherit' },
);
if (typedoc.status !== 0) {
  console.error(
    `[payhook] typedoc failed (exit ${typedoc.status ?? typedoc.signal}): the API reference is not built. Document each export it names (a /** */ comment), then run pnpm docs:build again.`,
  );
  process.exit(1);
}
console.log(`docs site built in ${out}`);
