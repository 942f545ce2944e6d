import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from '../wait.js';
import { freePort } from '../servers/free-port.js';

export { freePort } from '../servers/free-port.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
// Used only to wait for another process's build lock: the time another process takes cannot be moved.

export const EXAMPLES = ['express', 'fastify', 'hono', 'next'] as const;
export type ExampleName = (typeof EXAMPLES)[number];

export interface RunningExample {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Start an example as its `start` script does. Express, Fastify and Hono run their script as is
 * (`pnpm --dir examples/<name> start`). Next's script is `next build && next start`: the build
 * is done once per test run by `buildNextExample`, in a private copy under a lock, for every suite
 * that starts the example (two builds in one directory collide), then `next start -H 127.0.0.1
 * -p $PORT` runs there, exactly the second half of the script.
 */
export async function startExample(name: ExampleName, env: Record<string, string>, readyWithinMs = 60_000): Promise<RunningExample> {
  let child: ChildProcess;
  if (name === 'next') {
    const dir = await buildNextExample();
    child = spawn(process.execPath, [nextBin, 'start', '-H', '127.0.0.1', '-p', env.PORT!], {
      cwd: dir,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
  } else {
    child = spawn(join(root, 'node_modules/.bin/pnpm'), ['--dir', `examples/${name}`, 'start'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
  }
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${env.PORT}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  };
  // Ready once the process says it listens (the examples' announce(), next start's "Ready in"):
  // read on each chunk of its output, no polling; then one request shows it serves.
  const ready = await new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => resolve(false), readyWithinMs);
    const check = () => {
      if (/listening on http|Ready in/.test(output)) {
        clearTimeout(timer);
        resolve(true);
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`examples/${name} exited (${code}):\n${output}`));
    });
  });
  const res = ready ? await fetch(`${url}/orders/none`).catch(() => undefined) : undefined;
  if (res?.status !== 404) {
    await stop();
    throw new Error(`examples/${name} did not answer within ${readyWithinMs} ms (got ${res?.status ?? 'no answer'}):\n${output}`);
  }
  return { url, output: () => output, stop };
}

const nextExample = join(root, 'examples/next');
const nextBin = join(nextExample, 'node_modules/next/dist/bin/next');
/** Private builds, one directory per source digest; ignored by git through the .gitignore made there. */
const builds = join(root, 'test/security/.next-example');

/** A digest of the example's sources and the built packages it imports, so a change builds a new copy. */
function sourceDigest(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(path).update(readFileSync(path));
    }
  };
  for (const dir of ['examples/next/app', 'examples/next/lib', 'examples/shop/src']) walk(join(root, dir));
  hash.update(readFileSync(join(nextExample, 'package.json'))).update(readFileSync(join(nextExample, 'next.config.mjs')));
  for (const pkg of ['core', 'next', 'client', 'store-postgres', 'store-redis', 'board']) {
    const dist = join(root, `packages/${pkg}/dist/index.js`);
    if (existsSync(dist)) hash.update(readFileSync(dist));
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Build a copy of examples/next once per source digest (the first caller builds, others wait on a
 * lock directory). A build in use is never touched: a new digest builds beside it, and builds
 * older than a day are removed. Returns the directory to run `next start` in.
 */
export async function buildNextExample(): Promise<string> {
  const digest = sourceDigest();
  const copy = join(builds, digest);
  const marker = join(copy, '.built');
  const lock = `${copy}.lock`;
  mkdirSync(builds, { recursive: true });
  writeFileSync(join(builds, '.gitignore'), '*\n');
  for (const until = Date.now() + 300_000; ; ) {
    if (existsSync(marker)) return copy;
    try {
      mkdirSync(lock);
    } catch {
      // Someone else builds; a lock older than 5 minutes is a leftover.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 300_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > until) throw new Error('[payhook tests] gave up waiting for the Next example build lock');
      // Real wait: another process (a `next build` in another test file) holds the lock.
      await sleep(500);
      continue;
    }
    try {
      for (const old of readdirSync(builds)) {
        const path = join(builds, old);
        if (old !== digest && !old.startsWith('.') && Date.now() - statSync(path).mtimeMs > 24 * 3_600_000)
          rmSync(path, { recursive: true, force: true });
      }
      rmSync(copy, { recursive: true, force: true });
      mkdirSync(copy, { recursive: true });
      for (const entry of ['app', 'lib', 'package.json', 'tsconfig.json'])
        cpSync(join(nextExample, entry), join(copy, entry), { recursive: true });
      symlinkSync('../../../../examples/next/node_modules', join(copy, 'node_modules'));
      // The example's config with the workspace root computed from the copy's place.
      const config = readFileSync(join(nextExample, 'next.config.mjs'), 'utf8').replace(
        "new URL('../..', import.meta.url)",
        "new URL('../../../..', import.meta.url)",
      );
      writeFileSync(join(copy, 'next.config.mjs'), config);
      const build = spawn(process.execPath, [nextBin, 'build'], {
        cwd: copy,
        env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      build.stdout.on('data', (d) => (log += d));
      build.stderr.on('data', (d) => (log += d));
      const code = await new Promise<number | null>((resolve) => build.on('exit', resolve));
      if (code !== 0) throw new Error(`[payhook tests] next build of the example failed (${code}):\n${log}`);
      writeFileSync(marker, digest);
      return copy;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}
