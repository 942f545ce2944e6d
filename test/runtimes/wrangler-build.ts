import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const here = fileURLToPath(new URL('.', import.meta.url));
// wrangler and miniflare are the runtime package's, not the workspace root's.
export const fromRuntimes = createRequire(join(here, 'package.json'));

/**
 * A real `wrangler deploy --dry-run` of the Worker that `config` (a wrangler.toml here) names,
 * into `out`/dist: wrangler's own esbuild, conditions and checks, offline. Resolves to the bundle's text.
 */
export async function wranglerBuild(config: string, out: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: join(out, 'config'), WRANGLER_SEND_METRICS: 'false', CI: '1' };
  delete env.CLOUDFLARE_API_TOKEN;
  const wrangler = fromRuntimes.resolve('wrangler/bin/wrangler.js');
  await promisify(execFile)(
    process.execPath,
    [wrangler, 'deploy', '--dry-run', '--outdir', join(out, 'dist'), '--config', join(here, config)],
    {
      env,
      timeout: 60_000,
    },
  ).catch((e: { stdout?: string; stderr?: string }) => {
    throw new Error(`[payhook tests] wrangler could not build the Worker:\n${e.stdout}\n${e.stderr}`);
  });
  return readFileSync(join(out, 'dist', 'worker.js'), 'utf8');
}
