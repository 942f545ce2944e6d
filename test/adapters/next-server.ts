import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Served } from './http.js';

const appDir = fileURLToPath(new URL('./next-app/', import.meta.url));
const nextBin = fileURLToPath(new URL('../../node_modules/next/dist/bin/next', import.meta.url));
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };

/** Run `next build` on the test app (output in next-app/.next); it imports the packages' dist. */
export async function buildNextApp(): Promise<void> {
  for (const pkg of ['core', 'next']) {
    if (!existsSync(fileURLToPath(new URL(`../../packages/${pkg}/dist/index.js`, import.meta.url)))) {
      throw new Error(`[payhook tests] packages/${pkg}/dist is missing: run \`pnpm build\` before the Next adapter tests.`);
    }
  }
  const started = performance.now();
  const child = spawn(process.execPath, [nextBin, 'build'], { cwd: appDir, env, stdio: 'pipe' });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`[payhook tests] next build failed (${code}):\n${output}`);
  console.info(`[payhook tests] next build took ${Math.round(performance.now() - started)} ms`);
}

/** `next start` on 127.0.0.1, port 0, its receivers logging to `logFile`; `url` is `route`. */
export async function startNextApp(
  logFile: string,
  route: string,
  echoRoute = '/api/echo',
  signatureHeader = '',
  extraEnv: Record<string, string> = {},
): Promise<Served & { echoUrl: string }> {
  const child: ChildProcess = spawn(process.execPath, [nextBin, 'start', '-p', '0', '-H', '127.0.0.1'], {
    cwd: appDir,
    env: { ...env, PAYHOOK_TEST_LOG: logFile, PAYHOOK_TEST_SIGNATURE_HEADER: signatureHeader, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let output = '';
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`[payhook tests] next start was not ready within 30 s:\n${output}`)), 30_000);
    const read = (chunk: Buffer) => {
      output += chunk;
      const local = /Local:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (local && /Ready in/.test(output)) {
        clearTimeout(timer);
        resolve(local[1]!);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    void exited.then(() => reject(new Error(`[payhook tests] next start exited:\n${output}`)));
  });
  return {
    url: origin + route,
    echoUrl: origin + echoRoute,
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
