import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
const childFile = fileURLToPath(new URL('../children/receiver.ts', import.meta.url));

export interface ChildReceiver {
  port: number;
  process: ChildProcess;
  /** Everything the child wrote to stderr, for failure messages. */
  stderr(): string;
  /** Resolves when the child prints `POINT <name>`. */
  reached(name: string): Promise<void>;
  /** kill -9, and wait for the process to be gone. */
  kill9(): Promise<void>;
  /** A gentle stop. */
  stop(): Promise<void>;
}

/** Start test/children/receiver.ts in its own Node process; resolves once it listens. */
export const startReceiver = (env: Record<string, string>): Promise<ChildReceiver> => startChild(childFile, env);

/**
 * Other packages stay outside the bundle, imported from the very file Node would load for them
 * (native modules, engines that read files of their own); payhook's own packages resolve to their
 * sources through the tsconfig's paths and are bundled.
 */
const packagesOutside: Plugin = {
  name: 'packages-outside',
  setup(b) {
    b.onResolve({ filter: /^[^./#]/ }, async (args) => {
      if (args.path.startsWith('@payhook/') || args.pluginData === packagesOutside) return undefined;
      const found = await b.resolve(args.path, {
        resolveDir: args.resolveDir,
        kind: args.kind,
        importer: args.importer,
        pluginData: packagesOutside,
      });
      return found.errors.length > 0 ? { errors: found.errors } : { path: found.path, external: true };
    });
  },
};

let outDir: string | undefined;
const bundles = new Map<string, Promise<string>>();

/**
 * A child's TypeScript `file` and the sources it imports, bundled into one JavaScript file once per
 * test process. Started from it, a child is ready in less than half the time `--import tsx` takes
 * (about 150 ms against 400 on a quiet machine, more under load), and the tests that kill and
 * replace hundreds of children spend that time on their subject. Built from the sources each run, so
 * a child never runs a stale dist/.
 */
export function bundled(file: string): Promise<string> {
  let bundle = bundles.get(file);
  if (!bundle) {
    if (!outDir) {
      const dir = mkdtempSync(join(tmpdir(), 'payhook-children-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      outDir = dir;
    }
    const outfile = join(outDir, `${bundles.size}-${basename(file).replace(/\.ts$/, '.mjs')}`);
    bundle = build({
      entryPoints: [file],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      tsconfig: join(root, 'tsconfig.json'),
      sourcemap: 'linked',
      logLevel: 'silent',
      plugins: [packagesOutside],
    }).then(() => outfile);
    bundles.set(file, bundle);
  }
  return bundle;
}

/** Start a child TypeScript `file` that prints `READY <port>` in its own Node process; resolves once it is ready. */
export async function startChild(file: string, env: Record<string, string>): Promise<ChildReceiver> {
  // Node itself runs the bundle, so a kill -9 reaches the very process that runs the child's code.
  const child = spawn(process.execPath, ['--enable-source-maps', await bundled(file)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  const waiters: { name: string; resolve: () => void }[] = [];
  const seen = new Set<string>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  return await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child ${file} did not start in 15 s:\n${err}`)), 15_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`child ${file} exited (${code ?? signal}) before it was ready:\n${err}`));
    });
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      let nl: number;
      while ((nl = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, nl).trim();
        out = out.slice(nl + 1);
        const ready = /^READY (\d+)$/.exec(line);
        const point = /^POINT (\S+)(?: .*)?$/.exec(line);
        if (ready) {
          clearTimeout(timer);
          resolve({
            port: Number(ready[1]),
            process: child,
            stderr: () => err,
            reached: (name) => (seen.has(name) ? Promise.resolve() : new Promise((r) => waiters.push({ name, resolve: r }))),
            kill9: async () => {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
              await exited;
            },
            stop: async () => {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
              await exited;
            },
          });
        } else if (point) {
          seen.add(point[1]!);
          for (const w of waiters.filter((w) => w.name === point[1])) w.resolve();
        }
      }
    });
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

export interface Reply {
  status: number;
  outcome: string;
}

/**
 * POST a delivery to a child receiver; rejects when the connection dies (a killed process), or
 * after `timeoutMs` without a whole answer (the request is then destroyed, as a service gives up).
 */
export function post(port: number, body: string, headers: Record<string, string>, timeoutMs?: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/webhooks',
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => {
          let outcome = '';
          try {
            outcome = (JSON.parse(text) as { outcome?: string }).outcome ?? '';
          } catch {}
          resolve({ status: res.statusCode ?? 0, outcome });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (timeoutMs !== undefined) {
      const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { code: 'TIMEOUT' })), timeoutMs);
      const settle = () => clearTimeout(timer);
      req.on('close', settle);
      req.on('error', settle);
      req.on('response', (res) => res.on('end', settle));
    }
    req.end(body);
  });
}
