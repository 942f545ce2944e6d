import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const root = fileURLToPath(new URL('../../../..', import.meta.url));
const cli = join(root, 'packages/reference/dist/cli.js');
/**
 * The CLI's source run through tsx: for a file that does not call `buildCli`, since two files
 * building dist/ at once would swap the bin under each other's running children.
 */
export const SOURCE = ['--import', 'tsx', join(root, 'packages/reference/src/cli.ts')];

/** The newest modification time of the files below `dir` (0 when there is none). */
function newest(dir: string): number {
  let time = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) time = Math.max(time, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return time;
}

/**
 * Build the reference package only, so the tests run the bin a user runs, unless its dist/ is
 * newer than its sources (the test command builds everything first). A build then would clean
 * dist/ under the release check, which packs the package from another file at the same time.
 */
export function buildCli(): void {
  const dist = join(root, 'packages/reference/dist');
  const built = ['cli.js', 'index.d.ts', 'index.d.cts'].map((f) => join(dist, f));
  if (built.every(existsSync) && Math.min(...built.map((f) => statSync(f).mtimeMs)) > newest(join(root, 'packages/reference/src'))) return;
  const build = spawnSync(join(root, 'node_modules/.bin/pnpm'), ['--filter', '@payhook/reference', 'build'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(build.status, build.stderr + build.stdout).toBe(0);
}

export interface Run {
  child: ChildProcess;
  output: () => string;
  printed: (pattern: RegExp) => Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

/** Children still running: a failed test's are killed after it (`killLeftovers`), never left behind. */
const running = new Set<ChildProcess>();

export function killLeftovers(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/** Run the built CLI (or `entry`: SOURCE) as a child process, collecting stdout and stderr together. */
export function run(args: string[], env: Record<string, string> = {}, entry: string[] = [cli]): Run {
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let output = '';
  const readers = new Set<() => void>();
  const read = (c: Buffer) => {
    output += c.toString();
    for (const r of readers) r();
  };
  child.stdout!.on('data', read);
  child.stderr!.on('data', read);
  running.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  /** Resolves as soon as the output matches `pattern` (read on each chunk, no polling); rejects if the process exits first. */
  const printed = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(output);
        if (m) {
          readers.delete(check);
          resolve(m);
        }
      };
      readers.add(check);
      check();
      void exited.then(() => {
        check();
        reject(new Error(`exited without printing ${pattern}: ${output}`));
      });
    });
  return { child, output: () => output, printed, exited };
}

/** Run a command to its end: its exit code and output. */
export async function finish(
  args: string[],
  env?: Record<string, string>,
  entry?: string[],
): Promise<{ code: number | null; output: string }> {
  const p = run(args, env, entry);
  const code = await p.exited;
  return { code, output: p.output() };
}

/** The URL from the banner, once all of it (up to its last line, the callback URL) was printed. */
export async function urlOf(p: Run): Promise<string> {
  await p.printed(/callback URL/);
  return /listening on (http:\/\/\S+)/.exec(p.output())![1]!;
}

/** Stop a serve process as a user does (SIGTERM) and expect a clean exit. */
export async function stop(p: Run): Promise<void> {
  p.child.kill('SIGTERM');
  expect(await p.exited).toBe(0);
}

/** The signature header a delivery of `body` must carry. */
export const signatureOf = (body: Buffer | string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
