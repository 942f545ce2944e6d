import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';

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

/** Start a child TypeScript `file` that prints `READY <port>` in its own Node process; resolves once it is ready. */
export function startChild(file: string, env: Record<string, string>): Promise<ChildReceiver> {
  // `--import tsx` runs TypeScript in this very process (the tsx CLI would add a wrapper process
  // that a kill -9 would not reach), and tsx resolves @payhook/* through tsconfig paths.
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
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
  return new Promise((resolve, reject) => {
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
