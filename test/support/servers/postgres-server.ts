import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';
import { warnSkipped } from '../run/skipped.js';

const run = promisify(execFile);
const required = process.env.PAYHOOK_REQUIRE_SERVICES === '1';

/** A PostgreSQL cluster of the test's own, on a free port: the shared instance is never broken. */
export interface PrivatePostgres {
  url: string;
  /**
   * `pg_ctl stop -m fast` then start: open transactions are rolled back, connections cut. `onDown`
   * is called once it has stopped. `mode` 'immediate' stops without a checkpoint (every backend
   * quits on SIGQUIT, sending a warning rather than a FATAL), and the start replays the WAL as after a crash.
   */
  restart(onDown?: () => void, mode?: 'fast' | 'immediate'): Promise<void>;
  /** `pg_terminate_backend` on every client backend but its own (each gets FATAL 57P01), the server staying up; returns how many. */
  terminateBackends(): Promise<number>;
  /** SIGKILL the postmaster and every backend, then start again: recovery replays the WAL. */
  kill9(onDown?: () => void): Promise<void>;
  /** Stop it and remove its files. */
  stop(): Promise<void>;
}

/** The newest of Debian's PostgreSQL server binaries that has `tool` too, or undefined (a loud skip, or a failure in CI). */
export function serverBinaries(tool = 'initdb'): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', tool))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest) return path.join(root, newest, 'bin');
  const message = `PostgreSQL server binaries (initdb, pg_ctl, ${tool}) are not under ${root}; install Debian's postgresql package to run the fault suite.`;
  if (required) throw new Error(`PAYHOOK_REQUIRE_SERVICES=1 and ${message}`);
  warnSkipped('PostgreSQL', 'the PostgreSQL fault suite', message);
  return undefined;
}

/**
 * initdb a cluster in a fresh temporary directory and start it on 127.0.0.1 with the durable
 * settings the store's README asks for (fsync and synchronous_commit on). initdb refuses to run as
 * root, so as root the binaries run as the `postgres` user.
 */
export async function startPostgres(): Promise<PrivatePostgres | undefined> {
  const bin = serverBinaries();
  if (!bin) return undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'payhook-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pgRun = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]) : run(path.join(bin, tool), args);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses='127.0.0.1'",
    '-c fsync=on',
    '-c synchronous_commit=on',
    '-c max_connections=60',
  ].join(' ');
  const start = () => pgRun('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);

  await pgRun('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const log = () => (existsSync(path.join(dir, 'log')) ? readFileSync(path.join(dir, 'log'), 'utf8').slice(-2_000) : '');

  return {
    url,
    async restart(onDown, mode = 'fast') {
      // Stop and start apart, so the load can be held until the server is really down.
      await pgRun('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']).catch((e: Error) => {
        throw new Error(`pg_ctl stop failed: ${e.message}\n${log()}`);
      });
      onDown?.();
      // With its log file too: a postmaster writing to pg_ctl's stdout would hold the pipe, and this call, open.
      await start().catch((e: Error) => {
        throw new Error(`PostgreSQL did not come back after a restart: ${e.message}\n${log()}`);
      });
    },
    async terminateBackends() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: number }>(
          "select count(*) filter (where t)::int as n from (select pg_terminate_backend(pid) as t from pg_stat_activity where pid <> pg_backend_pid() and backend_type = 'client backend') s",
        );
        return rows[0]!.n;
      } finally {
        await client.end();
      }
    },
    async kill9(onDown) {
      const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      // The backends first: one left holding the shared memory would stop the new postmaster.
      await run('pkill', ['-9', '-P', String(pid)]).catch(() => {});
      process.kill(pid, 'SIGKILL');
      await waitGone(pid);
      onDown?.();
      await start().catch((e: Error) => {
        throw new Error(`PostgreSQL did not come back after kill -9: ${e.message}\n${log()}`);
      });
    },
    async stop() {
      await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Real wait: a killed process disappears on the kernel's time. */
async function waitGone(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`process ${pid} is still there 5 s after SIGKILL`);
}
