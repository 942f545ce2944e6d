import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

// What a bundler takes from the BUILT @payhook/core under each runtime's export conditions: a
// release test, it needs `pnpm build` (the unit tier runs without one).
const core = new URL('../../packages/core/', import.meta.url);
const dist = new URL('dist/', core);

describe('the build for workers and edge functions (no node:crypto)', () => {
  it('is what a bundler for workers or edge functions takes from the built package: no node: module, no raw-body', async () => {
    if (!existsSync(new URL('index.js', dist))) throw new Error('[payhook tests] build @payhook/core first (pnpm build)');
    const inputs = async (conditions: string[]) => {
      const result = await build({
        stdin: {
          contents: "export * from '@payhook/core'; export { nodeBridge } from '@payhook/core/adapter';",
          resolveDir: fileURLToPath(core),
        },
        bundle: true,
        write: false,
        metafile: true,
        format: 'esm',
        platform: conditions.includes('node') ? 'node' : 'neutral',
        mainFields: ['module', 'main'],
        conditions,
        logLevel: 'silent',
        external: ['node:*'],
        // As from node_modules: the package's own tsconfig (its `#platform` path for type checks) must not apply.
        tsconfigRaw: {},
      });
      return {
        files: Object.keys(result.metafile.inputs),
        imports: result.metafile.outputs[Object.keys(result.metafile.outputs)[0]!]!.imports.map((i) => i.path),
      };
    };
    // The conditions wrangler and Next's Edge runtime bundle with, and a browser's.
    for (const conditions of [['workerd', 'worker', 'browser'], ['edge-light', 'worker', 'browser'], ['browser']]) {
      const web = await inputs(conditions);
      expect(web.imports, conditions[0]).toEqual([]);
      expect(web.files.join('\n'), conditions[0]).not.toMatch(/platform\/node|adapter-node|node-bridge|raw-body|iconv-lite/);
    }
    // The same bundler with the `node` condition takes node:crypto and the Node bridge.
    const node = await inputs(['node']);
    expect(node.imports).toEqual(expect.arrayContaining(['crypto']));
    expect(node.files.join('\n')).toMatch(/platform\/node/);
    expect(node.files.join('\n')).toMatch(/adapter-node/);
  });
});
