/**
 * What waiting for replicas costs (issue 53): the receiver's answer with the wait off and on, 1 and
 * 32 deliveries in flight, on Redis (a primary and one replica; `waitForReplicas`) and PostgreSQL
 * (a primary and one streaming standby; `synchronous_standby_names`). Private servers on free
 * ports, on loopback, removed at the end. Prints only; nothing runs in the test suite.
 *
 *   ./node_modules/.bin/tsx bench/replicas.ts    # BENCH_SECONDS=3 per figure
 *
 * Each delivery is a new event through `receiver.handle`, empty handler: a claim and a done record.
 * Runs interleaved (off, on, off, on); the table gives the median of the two (their mean). Redis
 * commands: `INFO commandstats` deltas on the primary, and the client's socket writes.
 */
import { execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createReceiver, type Store } from '@payhook/core';
import { postgresStore } from '@payhook/store-postgres';
import { redisStore } from '@payhook/store-redis';
import { createEvent, signedRequest } from '@payhook/testing';

const exec = promisify(execFile);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const secret = 'whsec_bench';
const cleanups: (() => Promise<unknown>)[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function until(what: string, ok: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > end) throw new Error(`bench: ${what}, not within ${ms} ms`);
    await sleep(50);
  }
}

/** A redis-server of its own (AOF fsynced every second), and a client to ask it things. */
async function redisServer(extra: string[] = []): Promise<{ url: string; admin: Redis }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'payhook-bench-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes'];
  const server = spawn('redis-server', [...args, '--appendfsync', 'everysec', '--repl-diskless-sync-delay', '0', ...extra], {
    stdio: 'ignore',
  });
  cleanups.push(async () => {
    if (server.exitCode === null && server.signalCode === null) {
      const gone = new Promise((r) => server.once('exit', r));
      server.kill('SIGKILL');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `redis://127.0.0.1:${port}`;
  const admin = new Redis(url, { maxRetriesPerRequest: 0 });
  admin.on('error', () => {});
  cleanups.push(async () => admin.disconnect());
  await until(`redis-server on ${port} answering PING`, async () => (await admin.ping()) === 'PONG');
  return { url, admin };
}

const field = (info: string, name: string) => info.match(new RegExp(`^${name}:(\\S+)`, 'm'))?.[1];

/** Calls per command since the server started (Redis 7 names subcommands `script|exists`). */
async function commandstats(admin: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const m of (await admin.info('commandstats')).matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

/** A PostgreSQL primary and a streaming standby made with `pg_basebackup -R`, as the `postgres` user when root. */
async function postgresPair(): Promise<{ url: string; version: string }> {
  const root = '/usr/lib/postgresql';
  const found = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))) : [];
  const version = found.sort((a, b) => Number(b) - Number(a))[0];
  if (!version) throw new Error(`bench: no PostgreSQL server binaries under ${root}`);
  const bin = path.join(root, version, 'bin');
  const dir = mkdtempSync(path.join(tmpdir(), 'payhook-bench-pg-'));
  const asRoot = process.getuid?.() === 0;
  const pgRun = (tool: string, args: string[]) =>
    asRoot ? exec('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]) : exec(path.join(bin, tool), args);
  const [primary, standby] = [path.join(dir, 'primary'), path.join(dir, 'standby')];
  cleanups.push(async () => {
    for (const data of [standby, primary]) await pgRun('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });
  if (asRoot) {
    const id = async (flag: string) => Number((await exec('id', [flag, 'postgres'])).stdout.trim());
    chownSync(dir, await id('-u'), await id('-g'));
  }
  const port = await freePort();
  let standbyPort = await freePort();
  while (standbyPort === port) standbyPort = await freePort();
  const options = (p: number) =>
    `-p ${p} -k ${dir} -c listen_addresses='127.0.0.1' -c fsync=on -c synchronous_commit=on -c max_connections=60`;
  const start = (data: string, p: number) =>
    pgRun('pg_ctl', ['-D', data, '-l', `${data}.log`, '-o', options(p), '-w', '-t', '60', 'start']);
  await pgRun('initdb', ['-D', primary, ...'-U postgres -A trust --no-sync -E UTF8'.split(' ')]);
  await start(primary, port);
  await pgRun('pg_basebackup', ['-h', '127.0.0.1', '-p', String(port), '-D', standby, ...'-U postgres -R -X stream -c fast'.split(' ')]);
  await start(standby, standbyPort);
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, version };
}

const receiverOn = (store: Store) => createReceiver({ secret, store, logger: { warn() {}, error() {} } }).on('payment.success', () => {});
type Receiver = ReturnType<typeof receiverOn>;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

type Figure = Record<'eps' | 'p50' | 'p99' | 'n', number>;

/** New events through the receiver for `seconds`, `inFlight` at once; the answer's time in ms. */
async function measure(receiver: Receiver, inFlight: number, seconds = SECONDS): Promise<Figure> {
  const times: number[] = [];
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const request = signedRequest(createEvent('payment.success'), { secret });
        const t0 = performance.now();
        const response = await receiver.handle(request);
        times.push(performance.now() - t0);
        if (response.status !== 200) throw new Error(`bench: the receiver answered ${response.status}: ${await response.text()}`);
      }
    }),
  );
  return { eps: times.length / ((performance.now() - started) / 1000), p50: pct(times, 50), p99: pct(times, 99), n: times.length };
}

type Row = { store: string; inFlight: number; off: Figure[]; on: Figure[] };

/** off, on, off, on at each level, after a warm-up of each. */
async function series(store: string, run: (on: boolean, inFlight: number, seconds?: number) => Promise<Figure>): Promise<Row[]> {
  await run(false, 8, 1);
  await run(true, 8, 1);
  const rows: Row[] = [];
  for (const inFlight of [1, 32]) {
    const row: Row = { store, inFlight, off: [], on: [] };
    for (const on of [false, true, false, true]) {
      const f = await run(on, inFlight);
      row[on ? 'on' : 'off'].push(f);
      console.log(
        `${store} ${inFlight} in flight, wait ${on ? 'on ' : 'off'}: ${f.n} events, ${f.eps.toFixed(0)}/s, p50 ${f.p50.toFixed(3)} ms, p99 ${f.p99.toFixed(3)} ms`,
      );
    }
    rows.push(row);
  }
  return rows;
}

const [rows, notes]: [Row[], string[]] = [[], []];
const cleanup = async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch((e) => console.error('cleanup:', e));
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
const load = () => loadavg().map((x) => x.toFixed(2));
const atStart = load();
let [redisVersion, pgVersion] = ['', ''];
try {
  // 1. Redis: a primary and one replica.
  const primary = await redisServer();
  const replica = await redisServer(['--replicaof', '127.0.0.1', new URL(primary.url).port]);
  await until('the replica linked', async () => field(await replica.admin.info('replication'), 'master_link_status') === 'up');
  redisVersion = field(await primary.admin.info('server'), 'redis_version') ?? '?';
  const stores = [false, true].map((on) => redisStore({ url: primary.url, ...(on && { waitForReplicas: { count: 1, timeoutMs: 1000 } }) }));
  for (const s of stores) cleanups.push(() => s.close());
  const receivers = stores.map(receiverOn);
  // Every write to each client's socket: with one delivery in flight, one write is one round trip.
  for (const r of receivers) await measure(r, 1, 0.2);
  const writes = [0, 0];
  stores.forEach((s, i) => {
    const stream = (s.client as Redis).stream;
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((...a: unknown[]) => (writes[i]!++, write(...a))) as typeof stream.write;
  });
  rows.push(
    ...(await series('Redis', async (on, inFlight, seconds) => {
      const i = Number(on);
      const [before, w0] = [await commandstats(primary.admin), writes[i]!];
      const f = await measure(receivers[i]!, inFlight, seconds);
      const after = await commandstats(primary.admin);
      if (inFlight !== 8) {
        const per = [...after]
          .map(([name, calls]) => [name, (calls - (before.get(name) ?? 0)) / f.n] as const)
          .filter(([name, d]) => d > 0 && name !== 'info')
          .map(([name, d]) => `${name} ${d.toFixed(3)}`);
        const w = ((writes[i]! - w0) / f.n).toFixed(3);
        notes.push(`Redis, wait ${on ? 'on' : 'off'}, ${inFlight} in flight: per delivery ${per.join(', ')}; client socket writes ${w}`);
      }
      return f;
    })),
  );
  for (const s of stores.splice(0)) await s.close();

  // 2. PostgreSQL: a primary and a streaming standby; the wait switched on the server.
  const pair = await postgresPair();
  const admin = new pg.Client({ connectionString: pair.url });
  await admin.connect();
  cleanups.push(() => admin.end());
  const syncState = async () => (await admin.query<{ s: string }>('select sync_state as s from pg_stat_replication')).rows.map((r) => r.s);
  await until('the standby streaming', async () => (await syncState()).length === 1);
  pgVersion = (await admin.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v;
  const store = postgresStore({ connectionString: pair.url, listen: false }); // the documented setting beside a synchronous standby (no NOTIFY lock);
  cleanups.push(() => store.close());
  const receiver = receiverOn(store);
  let current: boolean | undefined;
  rows.push(
    ...(await series('PostgreSQL', async (on, inFlight, seconds) => {
      if (current !== on) {
        await admin.query(`alter system set synchronous_standby_names = '${on ? '*' : ''}'`);
        await admin.query('select pg_reload_conf()');
        await until(`sync_state ${on ? 'sync' : 'async'}`, async () => (await syncState())[0] === (on ? 'sync' : 'async'));
        await measure(receiver, inFlight, 0.3);
        current = on;
      }
      return measure(receiver, inFlight, seconds);
    })),
  );
  notes.push(`PostgreSQL after the runs: sync_state ${(await syncState()).join(', ')}`);
} finally {
  await cleanup();
}

const mid = (fs: Figure[], k: keyof Figure) => fs.reduce((s, f) => s + f[k], 0) / fs.length;
const f = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
console.log(`
Node ${process.version}, ${cpus().length} CPU (${cpus()[0]?.model}), Redis ${redisVersion}, PostgreSQL ${pgVersion}; load average at start ${atStart.join(' ')}, at end ${load().join(' ')}; ${SECONDS} s per figure

| store | in flight | events/s, no wait | wait | wait/no wait | p50 ms, no wait | wait | wait/no wait | p99 ms, no wait | wait | wait/no wait |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
for (const r of rows) {
  const cells = (['eps', 'p50', 'p99'] as const).map((k) => {
    const [off, on] = [mid(r.off, k), mid(r.on, k)];
    return `${f(off, k === 'eps' ? 0 : 3)} | ${f(on, k === 'eps' ? 0 : 3)} | ${(on / off).toFixed(2)}x`;
  });
  console.log(`| ${r.store} | ${r.inFlight} | ${cells.join(' | ')} |`);
}
console.log(`\n${notes.join('\n')}`);
