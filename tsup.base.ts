import { defineConfig } from 'tsup';

/** Every package builds the same way: ESM + CJS + types for Node 20, from the given entries. */
export const packageBuild = (entry: string[] = ['src/index.ts']) =>
  defineConfig({ entry, format: ['esm', 'cjs'], dts: true, clean: true, sourcemap: true, target: 'node20' });
