import { defineConfig, type Options } from 'tsup';

/** Every package builds the same way: ESM + CJS + types for Node 20, from the given entries. */
export const packageBuild = (entry: Options['entry'] = ['src/index.ts'], extra: Options = {}) =>
  defineConfig({ entry, format: ['esm', 'cjs'], dts: true, clean: true, sourcemap: true, target: 'node20', ...extra });
