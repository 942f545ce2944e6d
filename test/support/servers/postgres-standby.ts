import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { until as waitUntil } from '../wait.js';
import { effectsTable } from '../effects.js';
import { freePort } from './free-port.js';
import { serverBinaries } from './postgres-server.js';
import { tcpProxy } from './tcp-proxy.js';

const run = promisify(execFile);

/** A primary streaming to a real standby over a link that runs `lagMs` behind, as a managed service's replica. */
export interface ReplicatedPostgres {
  /** The receivers' URL: through a proxy that points at the primary, and at the standby once it is promoted. */
  url: string;
  /** The primary and the standby, straight (the standby is read-only until `failover()`). */
  primaryUrl: string;
  standbyUrl: string;
  /**
   * SIGKILL the primary and its backends, cut the replication link (WAL still on its way is lost),
   * promote the standby, then point the receivers' proxy at it and reset its open connections (the
   * DNS flip). `onKilled` is called once the primary is gone; `onPromoted` runs once the standby
   * is promoted, before any receiver can reach it.
   */
  failover(hooks?: { onKilled?: () => void; onPromoted?: () => Promise<void> }): Promise<FailoverTimings>;
  /** Stop both servers and the proxies, and remove the files. */
  stop(): Promise<void>;
}

/** When each step ended, in ms since the kill began (`performance.now()` of the kill in `at`). */
export interface FailoverTimings {
  at: number;
  killed: number;
  promoted: number;
  switched: number;
}

/** Debian's newest PostgreSQL binaries, or undefined after a loud warning (a failure with PAYHOOK_REQUIRE_SERVICES=1). */
export const standbyBinaries = (): string | undefined => serverBinaries('pg_basebackup');

/**
 * A primary (wal_level replica, synchronous_commit on) and a standby made from it with
 * `pg_basebackup -R` through a delaying proxy, each on its own free port. With `synchronous`, the
 * primary waits for the standby's flush before it acknowledges a commit (synchronous_standby_names
 * '*', set once the standby streams, so that the set-up's own commits do not wait for it). Resolves
 * once `pg_stat_replication` shows the standby streaming (and `sync`, when asked for); undefined
 * without the binaries.
 */
export async function startPostgresReplicated(options: { lagMs: number; synchronous: boolean }): Promise<ReplicatedPostgres | undefined> {
  const bin = standbyBinaries();
  if (!bin) return undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'payhook-pg-standby-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    chownSync(dir, uid, Number((await run('id', ['-g', 'postgres'])).stdout.trim()));
  }
  const pgRun = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]) : run(path.join(bin, tool), args);
  const primary = { data: path.join(dir, 'primary'), port: await freePort() };
  const standby = { data: path.join(dir, 'standby'), port: await freePort() };
  const start = (node: { data: string; port: number }) => {
    const settings =
      `-p ${node.port} -k ${dir} -c listen_addresses='127.0.0.1' -c fsync=on -c synchronous_commit=on ` +
      '-c max_connections=200 -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on';
    const log = path.join(dir, `${path.basename(node.data)}.log`);
    return pgRun('pg_ctl', ['-D', node.data, '-l', log, '-o', settings, '-w', '-t', '60', 'start']).catch((e: Error) => {
      throw new Error(
        `${path.basename(node.data)} did not start: ${e.message}\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-2_000) : ''}`,
      );
    });
  };
  const urlOf = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;
  const replication = await tcpProxy({ host: '127.0.0.1', port: primary.port });
  const clients = await tcpProxy({ host: '127.0.0.1', port: primary.port });
  const stop = async () => {
    replication.cut();
    clients.cut();
    for (const node of [primary, standby])
      if (existsSync(path.join(node.data, 'postmaster.pid')))
        await pgRun('pg_ctl', ['-D', node.data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
    await Promise.all([replication.close(), clients.close()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await pgRun('initdb', ['-D', primary.data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
    await start(primary);
    // The effects table of pg-transactional is the merchant's: it is on both servers before any load.
    await (await effectsTable(urlOf(primary.port))).end();
    const backup = [...'-R -X stream -U postgres -h 127.0.0.1'.split(' '), '-p', String(replication.port), '-D', standby.data];
    await pgRun('pg_basebackup', backup);
    replication.delay(options.lagMs);
    await start(standby);
    await query(urlOf(primary.port), async (c) => {
      if (options.synchronous) {
        await c.query("alter system set synchronous_standby_names = '*'");
        await c.query('select pg_reload_conf()');
      }
      await until(async () => {
        const { rows } = await c.query<{ state: string; sync_state: string }>('select state, sync_state from pg_stat_replication');
        return rows.some((r) => r.state === 'streaming' && (!options.synchronous || r.sync_state === 'sync'));
      }, 'the standby streaming from the primary');
    });
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    url: clients.url(urlOf(primary.port)),
    primaryUrl: urlOf(primary.port),
    standbyUrl: urlOf(standby.port),
    async failover(hooks = {}) {
      const at = performance.now();
      const since = () => Math.round(performance.now() - at);
      const pid = Number(readFileSync(path.join(primary.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      // The backends first, so none outlives the postmaster and commits alone.
      await run('pkill', ['-9', '-P', String(pid)]).catch(() => {});
      process.kill(pid, 'SIGKILL');
      await waitGone(pid);
      const killed = since();
      hooks.onKilled?.();
      replication.cut();
      await pgRun('pg_ctl', ['-D', standby.data, '-w', '-t', '60', 'promote']);
      const promoted = since();
      await hooks.onPromoted?.();
      clients.retarget(standby.port);
      clients.cut();
      clients.restore();
      return { at, killed, promoted, switched: since() };
    },
    stop,
  };
}

/** One statement session on `url`. */
export async function query<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

const until = (check: () => Promise<boolean>, what: string) => waitUntil(check, { what, timeoutMs: 15_000, intervalMs: 50 });

/** Gone, or a zombie: the container's init may take a second or two to reap it, and it holds nothing. */
async function waitGone(pid: number): Promise<void> {
  const state = () => (existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] : undefined);
  await until(async () => {
    try {
      process.kill(pid, 0);
      return state() === 'Z';
    } catch {
      return true;
    }
  }, `end of process ${pid} after SIGKILL`);
}
