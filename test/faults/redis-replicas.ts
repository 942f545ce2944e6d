import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '@payhook/test-support/apps/examples';
import { until } from '@payhook/test-support/wait';
import { tcpProxy, type TcpProxy } from '@payhook/test-support/servers/tcp-proxy';

const HOST = '127.0.0.1';

/** A primary with one replica of the test's own (and, if asked, three Sentinels), for failing over under load. */
export interface ReplicatedRedis {
  /** Where the receivers connect: a proxy in front of the primary, moved to the replica by `failover()` (without Sentinels). */
  url: string;
  primaryPort: number;
  replicaPort: number;
  /** `host:port` of each Sentinel, when started with them: the receivers' CHILD_REDIS_SENTINELS. */
  sentinelAddrs?: string[];
  masterName: string;
  /** Kill the primary with SIGKILL, lose what its replication stream still carried, and make the replica the primary. */
  failover(): Promise<void>;
  /** The failover's steps, each in ms after the kill: `killed 0, promoted 12, …`. */
  timeline(): string;
  /** With Sentinels: what they decided (down, failovers, reconfigurations, tilt), from their logs, for a failure message. */
  sentinelEvents?(): string[];
  /** Kill every process and remove every file. */
  stop(): Promise<void>;
}

export interface ReplicationOptions {
  /** How far the replica runs behind: every byte of the replication link (both ways) is held this long. */
  lagMs: number;
  /** Three Sentinels (quorum 2) decide the failover, and the receivers find the primary through them. */
  sentinels?: boolean;
}

/** One command on a fresh connection to a local server (a Redis or a Sentinel); throws when it cannot be asked. */
export async function ask(port: number, ...command: (string | number)[]): Promise<unknown> {
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    commandTimeout: 2_000,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.call(String(command[0]), ...command.slice(1));
  } finally {
    client.disconnect();
  }
}

/** Check until `predicate` holds; a server not answering yet counts as not yet. */
const eventually = (predicate: () => Promise<boolean>, what: string | (() => string), timeoutMs = 10_000) =>
  until(() => predicate().catch(() => false), { what, timeoutMs, intervalMs: 50 });

/** A flat `[k, v, k, v…]` reply (SENTINEL replicas, sentinels) as an object. */
const fields = (flat: unknown): Record<string, string> => {
  const list = flat as string[];
  return Object.fromEntries(list.flatMap((v, i) => (i % 2 ? [] : [[v, list[i + 1]!]])));
};

/**
 * Start a primary (AOF, fsynced every second: the documented setup) and a replica that follows it
 * through a TCP proxy holding every byte `lagMs`, and wait until the replica is in sync. The
 * replica announces its own port, so the primary's INFO (where Sentinel finds replicas) names the
 * replica, not the proxy.
 */
export async function startRedisReplicated(options: ReplicationOptions): Promise<ReplicatedRedis> {
  const dir = mkdtempSync(path.join(tmpdir(), 'payhook-redis-replicas-'));
  const masterName = 'payhook';
  const processes: ChildProcess[] = [];
  const proxies: TcpProxy[] = [];
  const steps: [string, number][] = [];
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  let primary: ChildProcess | undefined;

  /** A server from a config file of its own (CONFIG REWRITE, which Sentinel runs, needs one; Sentinel rewrites its own). */
  const server = (name: string, lines: string[], extra: string[] = []) => {
    const home = path.join(dir, name);
    const conf = path.join(home, `${name}.conf`);
    if (!existsSync(conf)) {
      mkdirSync(home);
      writeFileSync(conf, [...lines, `bind ${HOST}`, `dir ${home}`, `logfile ${path.join(home, 'log')}`, ''].join('\n'));
    }
    const child = spawn('redis-server', [conf, ...extra], { stdio: 'ignore' });
    processes.push(child);
    return child;
  };
  /** The end of a server's log, for an error message. */
  const log = (name: string) => {
    const file = path.join(dir, name, 'log');
    return existsSync(file) ? `\n--- ${name} log ---\n${readFileSync(file, 'utf8').split('\n').slice(-25).join('\n')}` : '';
  };
  // AOF everysec, the documented setup; and no 5 s wait for more replicas before a (diskless) full sync.
  const stored = (port: number) => ['appendonly yes', 'appendfsync everysec', 'save ""', 'repl-diskless-sync-delay 0', `port ${port}`];

  const stop = async () => {
    const running = processes.filter((p) => p.exitCode === null && p.signalCode === null);
    await Promise.all(
      running.map((p) => {
        const gone = new Promise((r) => p.once('exit', r));
        p.kill('SIGKILL');
        return gone;
      }),
    );
    await Promise.all(proxies.map((p) => p.close()));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const replication = await tcpProxy({ host: HOST, port: primaryPort });
    const receivers = await tcpProxy({ host: HOST, port: primaryPort });
    proxies.push(replication, receivers);
    primary = server('primary', stored(primaryPort));
    await eventually(
      async () => (await ask(primaryPort, 'PING')) === 'PONG',
      () => `the primary to answer PING${log('primary')}`,
    );
    server('replica', [
      ...stored(replicaPort),
      `replicaof ${HOST} ${replication.port}`,
      `replica-announce-ip ${HOST}`,
      `replica-announce-port ${replicaPort}`,
    ]);
    const inSync = async (port: number) => String(await ask(port, 'INFO', 'replication')).includes('master_link_status:up');
    await eventually(
      () => inSync(replicaPort),
      () => `the replica to be in sync${log('replica')}`,
    );
    // Lag from now on: the initial sync, a few round trips, need not pay it.
    replication.delay(options.lagMs);

    const sentinelPorts = options.sentinels ? [await freePort(), await freePort(), await freePort()] : [];
    for (const [i, port] of sentinelPorts.entries()) {
      server(
        `sentinel-${i}`,
        [
          `port ${port}`,
          `sentinel monitor ${masterName} ${HOST} ${primaryPort} 2`,
          // Not 1000: right after a switch, a Sentinel that waits a second for the new primary's first
          // PONG on a busy machine finds it down, and the other Sentinels' votes about the old primary
          // still count: they fail the new primary over again, to the old one back as its replica.
          `sentinel down-after-milliseconds ${masterName} 2000`,
          // Not 5000: Sentinel points a replica that follows another address than the primary's (here
          // the replication proxy) at the primary itself once failover-timeout has passed
          // (+fix-slave-config), which would take the lag away before the failover. It only bounds
          // a failover that goes wrong here (one split vote waits twice as long).
          `sentinel failover-timeout ${masterName} 30000`,
        ],
        ['--sentinel'],
      );
    }
    // Ready for a failover once every Sentinel knows the replica and both other Sentinels (their hello messages, every 2 s).
    for (const [i, port] of sentinelPorts.entries()) {
      const ready = async () => {
        const replicas = ((await ask(port, 'SENTINEL', 'REPLICAS', masterName)) as unknown[]).map(fields);
        const others = (await ask(port, 'SENTINEL', 'SENTINELS', masterName)) as unknown[];
        const replica = replicas.find((r) => r.port === String(replicaPort));
        return replicas.length === 1 && !!replica && !/disconnected|s_down/.test(replica.flags ?? '') && others.length === 2;
      };
      await eventually(ready, () => `Sentinel ${i} to know the replica and the other Sentinels${log(`sentinel-${i}`)}`, 20_000);
    }

    let killedAt = 0;
    const step = (what: string) => steps.push([what, Math.round(performance.now() - killedAt)]);
    const masterOf = async (port: number) => ((await ask(port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)) as string[])[1];

    return {
      url: receivers.url(`redis://${HOST}:${primaryPort}`),
      primaryPort,
      replicaPort,
      ...(options.sentinels && { sentinelAddrs: sentinelPorts.map((p) => `${HOST}:${p}`) }),
      masterName,
      async failover() {
        killedAt = performance.now();
        const dead = new Promise((r) => primary!.once('exit', r));
        primary!.kill('SIGKILL');
        await dead;
        // What the dead primary had not yet sent its replica is lost, as its unsent stream is.
        replication.cut();
        step('primary killed');
        if (options.sentinels) {
          const promoted = new Set<number>();
          const done = async () => {
            for (const p of sentinelPorts) {
              if (promoted.has(p) || (await masterOf(p)) !== String(replicaPort)) continue;
              promoted.add(p);
              step(`sentinel ${sentinelPorts.indexOf(p)} names the replica`);
            }
            return promoted.size === sentinelPorts.length;
          };
          await eventually(
            done,
            () => `the Sentinels to promote the replica${sentinelPorts.map((_, i) => log(`sentinel-${i}`)).join('')}`,
            20_000,
          );
        } else {
          await ask(replicaPort, 'REPLICAOF', 'NO', 'ONE');
          step('replica promoted');
          // The receivers' address now leads to the replica, and the connections they had are reset.
          receivers.retarget(replicaPort);
          receivers.cut();
          receivers.restore();
          step('receivers moved');
        }
        // The new primary gets a replica again, as a managed service replaces the lost node (a wait for
        // one replica would fail every write without): the old primary, restarted on its files,
        // follows it directly and drops what it alone had.
        const follow = [
          '--replicaof',
          HOST,
          String(replicaPort),
          '--replica-announce-ip',
          HOST,
          '--replica-announce-port',
          String(primaryPort),
        ];
        primary = server('primary', [], follow);
        await eventually(
          () => inSync(primaryPort),
          () => `the old primary to follow the new one${log('primary')}`,
        );
        step('old primary back as its replica');
      },
      timeline: () => steps.map(([what, ms]) => `${what} ${ms} ms`).join(', '),
      ...(options.sentinels && {
        sentinelEvents: () =>
          sentinelPorts.flatMap((_, i) =>
            readFileSync(path.join(dir, `sentinel-${i}`, 'log'), 'utf8')
              .split('\n')
              .filter((line) => /[+-](s?down|odown|switch-master|failover-end|tilt|convert-to-slave|fix-slave-config)\b/.test(line))
              .map((line) => `sentinel ${i}: ${line}`),
          ),
      }),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
