import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * A build of @payhook/core as one namespace: its root, with the `lifecycle` and `store` doors
 * beside it when the build has them. Builds before issue 32 exported all of it from the root, so
 * the benchmarks compare them with today's through the same names.
 */
export async function loadCore(dist) {
  const doors = ['lifecycle.js', 'store.js'].map((f) => path.join(dist, f)).filter((f) => existsSync(f));
  const parts = await Promise.all([path.join(dist, 'index.js'), ...doors].map((f) => import(pathToFileURL(f).href)));
  return Object.assign({}, ...parts.reverse());
}
