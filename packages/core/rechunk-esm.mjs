// The ESM build in few files (issue 54): tsup (esbuild) splits the code its entries share into a
// chunk per set of entries, statement by statement, so importing the root loaded 20 files, and a
// fresh process spent most of its first delivery's time resolving and linking them. This step runs
// after tsup and regroups tsup's ESM output with rollup, which takes chunks by name:
//   - `signature`: what `@payhook/core/verify` runs (the root and every other entry import it too);
//   - `core`: everything else the root runs as soon as it is imported;
//   - the rest as rollup groups it: each part loaded on demand (`import()`) stays a file of its own,
//     so the app still loads only what it uses, and each module is in exactly one file.
// The CommonJS build (one file per entry) and the types are tsup's, untouched. Source maps are
// chained, so they still point into src/.
//
//   node rechunk-esm.mjs        (run by `pnpm build`, after tsup)
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rollup } from 'rollup';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, 'dist');
const pkg = JSON.parse(readFileSync(path.join(here, 'package.json'), 'utf8'));

/** Every ESM file package.json points at (exports, `#platform`), and the command's. */
function entryFiles() {
  const found = new Set(['./dist/cli.js']);
  const walk = (v) => {
    if (typeof v === 'string') {
      if (v.endsWith('.js')) found.add(v);
    } else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(pkg.exports);
  walk(pkg.imports);
  return Object.fromEntries([...found].map((f) => [f.slice('./dist/'.length, -'.js'.length), path.join(here, f)]));
}

const input = entryFiles();
for (const file of Object.values(input)) {
  if (!existsSync(file))
    throw new Error(`[@payhook/core build] ${path.relative(here, file)} is missing: run tsup first (pnpm build runs both).`);
}

/** The modules a file runs when imported: its static imports, transitively (not `import()`). */
function staticClosure(getModuleInfo, id, seen = new Set()) {
  if (seen.has(id)) return seen;
  seen.add(id);
  for (const next of getModuleInfo(id)?.importedIds ?? []) staticClosure(getModuleInfo, next, seen);
  return seen;
}

let signature;
let root;
const bundle = await rollup({
  input,
  // Node's built-ins, the package's own `#platform` and its dependencies stay imports.
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
  // None of them is imported for its side effects: a file that uses nothing of one does not import it.
  treeshake: { moduleSideEffects: (_id, external) => !external },
  plugins: [
    {
      name: 'tsup-source-maps',
      // tsup's map beside each file, so rollup's maps lead back to src/ rather than to tsup's output.
      load(id) {
        const map = `${id}.map`;
        return existsSync(map) ? { code: readFileSync(id, 'utf8'), map: readFileSync(map, 'utf8') } : null;
      },
    },
  ],
  onwarn(warning, warn) {
    if (warning.code === 'CIRCULAR_DEPENDENCY') throw new Error(`[@payhook/core build] ${warning.message}`);
    warn(warning);
  },
});
// rollup has read every module: tsup's ESM files can go (the CommonJS files and the types stay).
const isEsm = (name) => name.endsWith('.js') || name.endsWith('.js.map');
for (const dir of [dist, path.join(dist, 'platform')]) {
  for (const name of readdirSync(dir)) if (isEsm(name)) rmSync(path.join(dir, name));
}
const { output } = await bundle.write({
  format: 'es',
  dir: dist,
  sourcemap: true,
  // tsup's names carry esbuild's hash already: one hash is enough.
  chunkFileNames: (chunk) => `${chunk.name.replace(/-[A-Z0-9]{8}$/, '')}-[hash].js`,
  manualChunks(id, { getModuleInfo }) {
    signature ??= staticClosure(getModuleInfo, input.verify);
    root ??= staticClosure(getModuleInfo, input.index);
    if (id === input.verify || id === input.index) return undefined;
    if (signature.has(id)) return 'signature';
    if (root.has(id)) return 'core';
    return undefined;
  },
});
await bundle.close();
const files = output.filter((f) => f.type === 'chunk').length;
console.log(`[@payhook/core build] ESM regrouped by rollup: ${files} files for ${Object.keys(input).length} entries`);
