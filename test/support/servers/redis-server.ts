import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { warnSkipped } from '../run/skipped.js';

const required = process.env.PAYHOOK_REQUIRE_SERVICES === '1';

/** How the server keeps its data: not at all, or an append-only file fsynced every second or every write. */
export type Persistence = 'none' | 'everysec' | 'always';

/** A redis-server of the test's own, on a free port: the shared instance is never broken. */
export interface PrivateRedis {
  url: string;
  /** A clean shutdown (SIGTERM: the AOF is fsynced, nothing else is saved), then start again. */
  restart(): Promise<void>;
  /** SIGKILL, then start again on the same files. */
  kill9(): Promise<void>;
  flushall(): Promise<void>;
  /** Stop it and remove its files. */
  stop(): Promise<void>;
}

/** Whether redis-server is installed; a loud skip, or a failure in CI, when it is not. */
export function hasRedisServer(): boolean {
  if (spawnSync('redis-server', ['--version']).status === 0) return true;
  const message = "redis-server is not on PATH; install Debian's redis-server package to run the fault suite.";
  if (required) throw new Error(`PAYHOOK_REQUIRE_SERVICES=1 and ${message}`);
  warnSkipped('Redis', 'the Redis fault suite', message);
  return false;
}

export async function startRedis(persistence: Persistence, extra: string[] = []): Promise<PrivateRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'payhook-redis-'));
  const port = await freePort();
  const aof = persistence === 'none' ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', persistence];
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...aof, ...extra];
  const url = `redis://127.0.0.1:${port}`;
  let server: ChildProcess;

  const start = async () => {
    server = spawn('redis-server', args, { stdio: 'ignore' });
    // Real wait: until the new server answers PING (it loads its AOF first).
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      for (let i = 0; i < 200; i++) {
        try {
          if (probe.status !== 'ready') await probe.connect();
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          probe.disconnect();
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`redis-server on port ${port} did not answer PING within 5 s`);
    } finally {
      probe.disconnect();
    }
  };
  const exited = (signal: NodeJS.Signals) => {
    const done = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    server.kill(signal);
    return done;
  };
  await start();

  return {
    url,
    async restart() {
      await exited('SIGTERM');
      await start();
    },
    async kill9() {
      await exited('SIGKILL');
      await start();
    },
    async flushall() {
      const admin = new Redis(url, { maxRetriesPerRequest: 0 });
      try {
        await admin.flushall();
      } finally {
        admin.disconnect();
      }
    },
    async stop() {
      if (server.exitCode === null && server.signalCode === null) await exited('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
