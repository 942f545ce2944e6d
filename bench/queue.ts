/**
 * Durable handoff (issue 17): how fast a receiver answers when the handlers are slow, in process
 * and with a queue, and how many events per second the BullMQ and pg-boss handoffs accept and
 * their workers process. Prints markdown tables on stdout, then the figures as JSON (progress goes
 * to stderr). It writes nothing to BENCHMARKS.md; its "Issue 17" section holds one run's tables.
 * About 5 minutes on 2 shared cores.
 *
 *   node --import tsx bench/queue.ts                      # DATABASE_URL, REDIS_URL as for the tests
 *   BENCH_QUEUE_SLOW_DELIVERIES=0 BENCH_QUEUE_ENGINES=bullmq BENCH_QUEUE_WORKERS=1,4 BENCH_QUEUE_ROUNDS=1 node --import tsx bench/queue.ts
 *   BENCH_QUEUE_SLOW_IN_FLIGHT=8 BENCH_QUEUE_IN_PROCESS=0 BENCH_QUEUE_EVENTS=0 node --import tsx bench/queue.ts   # the handoff's answer time only
 *   BENCH_QUEUE_WARM_UP=500 BENCH_QUEUE_SLOW_DELIVERIES=2000 ...   # the same once the web process is warm
 *
 * It runs the queue test children (test/queue/children/web.ts and worker.ts), each in its own Node
 * process, all on 127.0.0.1, each configuration on its own queue, store table and effects run,
 * each child's store on a pool of BENCH_QUEUE_PG_MAX (10, postgresStore's own default) connections:
 *
 * 1. Answer time with handlers of 30 s: BENCH_QUEUE_SLOW_DELIVERIES (200; 0 skips this part)
 *    distinct deliveries, at most BENCH_QUEUE_SLOW_IN_FLIGHT (50) at once, from a keep-alive client
 *    to one web process: (a) the in-process receiver (CHILD_IN_PROCESS=1, CHILD_HANDLER_MS=30000),
 *    which answers 202 at its 8 s budget; (b) the BullMQ handoff and (c) the pg-boss handoff, each
 *    with one worker process (concurrency 4) whose handler takes 30 s running beside it. Each web
 *    process first answers BENCH_QUEUE_WARM_UP (10) deliveries (connections, pg-boss's start, the
 *    JIT), not counted.
 * 2. Throughput per engine with 1, 2 and 4 worker processes (BENCH_QUEUE_WORKERS), in
 *    BENCH_QUEUE_ROUNDS (2) rounds of alternating order: BENCH_QUEUE_EVENTS (3,000) distinct events
 *    are sent to 2 web processes with the handoff, at most BENCH_QUEUE_IN_FLIGHT (64) at once, with
 *    no worker running: accepted/s = events / (first request sent .. last 200 `queued` received).
 *    Then the web processes are stopped (their Postgres connections with them) and the workers
 *    started together (CHILD_EFFECT=transactional, CHILD_HANDLER_MS=0,
 *    CHILD_CONCURRENCY=BENCH_QUEUE_CONCURRENCY, 16) with the backlog held back until the last one
 *    is ready (BullMQ: the queue paused; pg-boss: the jobs' start_after pushed out): processed/s =
 *    all jobs / (first .. last effect row). Each effect row is committed with the job's done record
 *    (store.transactional()), so the rows also check that every event ran once.
 *
 * The Postgres server may be shared (tests running beside): before starting children it waits
 * for free connections (each child's store pool and pg-boss's 3). All children are killed and
 * the queues, tables and effect rows removed at the end.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import type pg from 'pg';
import { sign } from '@payhook/core';
import { post, startChild, type ChildReceiver, type Reply } from '@payhook/test-support/children';
import { effectsTable } from '@payhook/test-support/effects';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SLOW_DELIVERIES = num('BENCH_QUEUE_SLOW_DELIVERIES', 200);
const SLOW_IN_FLIGHT = num('BENCH_QUEUE_SLOW_IN_FLIGHT', 50);
const SLOW_HANDLER_MS = num('BENCH_QUEUE_SLOW_HANDLER_MS', 30_000);
/** 0 leaves out the in-process receiver of part 1 (its answers take the 8 s budget each). */
const IN_PROCESS = num('BENCH_QUEUE_IN_PROCESS', 1) !== 0;
const EVENTS = num('BENCH_QUEUE_EVENTS', 3_000);
const ROUNDS = num('BENCH_QUEUE_ROUNDS', 2);
const IN_FLIGHT = num('BENCH_QUEUE_IN_FLIGHT', 64);
const WEB_PROCESSES = num('BENCH_QUEUE_WEB', 2);
const CONCURRENCY = num('BENCH_QUEUE_CONCURRENCY', 16);
const HANDLER_MS = num('BENCH_QUEUE_HANDLER_MS', 0);
/** Each child's store pool (CHILD_PG_MAX; the children's own default is 4, for the tests): 10 is postgresStore's own pool size. */
const PG_MAX = num('BENCH_QUEUE_PG_MAX', 10);
/** Postgres connections a web or worker child may open: its store pool, and pg-boss's pool of 3. */
const PER_CHILD = PG_MAX + 3;
const WORKERS = (process.env.BENCH_QUEUE_WORKERS ?? '1,2,4').split(',').map(Number);
const ENGINES = (process.env.BENCH_QUEUE_ENGINES ?? 'bullmq,pg-boss').split(',') as Engine[];
/** Deliveries each web process answers first, not counted (connections, pg-boss's start, the JIT). */
const WARM_UP = num('BENCH_QUEUE_WARM_UP', 10);
const DRAIN_TIMEOUT_MS = num('BENCH_QUEUE_DRAIN_TIMEOUT_S', 300) * 1000;

type Engine = 'bullmq' | 'pg-boss';
const SECRET = 'whsec_queue_bench';
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const WEB = here('../test/queue/children/web.ts');
const WORKER = here('../test/queue/children/worker.ts');
/** One id per run of this script: queue names, tables and effect runs all carry it. */
const RUN = `bq${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;

const log = (...args: unknown[]) => console.error('[bench queue]', ...args);
const children = new Set<ChildReceiver>();
const created = { tables: [] as string[], runs: [] as string[], queues: [] as { engine: Engine; name: string }[] };

async function spawnChild(file: string, env: Record<string, string>): Promise<ChildReceiver> {
  const child = await startChild(file, env);
  children.add(child);
  return child;
}
async function stopAll(list: Iterable<ChildReceiver> = [...children]) {
  await Promise.all(
    [...list].map(async (c) => {
      children.delete(c);
      // SIGKILL: a worker's 30 s handlers are not worth waiting for, and nothing here needs a clean stop.
      await c.kill9();
    }),
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Other processes may share this Postgres: wait (up to 2 minutes) until `need` of its
 * max_connections are free, so that a child does not die of "too many clients" mid-measurement.
 * Each store pool takes up to 10 connections, each pg-boss 4.
 */
async function roomFor(pool: pg.Pool, need: number): Promise<void> {
  const until = Date.now() + 120_000;
  let said = false;
  for (;;) {
    const { rows } = await pool.query(`select current_setting('max_connections')::int - count(*)::int as free from pg_stat_activity`);
    const free = (rows[0] as { free: number }).free;
    if (free >= need) return;
    if (Date.now() > until) return log(`going on with ${free} free Postgres connections (wanted ${need})`);
    if (!said) log(`waiting for ${need} free Postgres connections (${free} now)`);
    said = true;
    await sleep(1000);
  }
}

/** The env a queue child needs for one configuration: its own queue and store table. */
function configEnv(engine: Engine, id: string): Record<string, string> {
  // pg-boss takes letters, digits, - and _ in a queue name; BullMQ refuses ':'; Postgres wants a plain identifier.
  const name = `${RUN}_${id}`.replace(/[^a-z0-9_]/gi, '_');
  created.tables.push(name);
  created.runs.push(name);
  created.queues.push({ engine, name });
  return {
    QUEUE_ENGINE: engine,
    QUEUE_NAME: name,
    CHILD_PG_MAX: String(PG_MAX),
    CHILD_URL: DATABASE_URL,
    CHILD_REDIS: REDIS_URL,
    CHILD_TABLE: name,
    CHILD_RUN: name,
    CHILD_SECRET: SECRET,
  };
}

const delivery = (reference: string) => {
  const body = JSON.stringify({
    event: 'payment.success',
    mode: 'sandbox',
    reference,
    merchantReference: `order_${reference}`,
    amount: '10.00',
    serviceFee: '0.30',
    currency: 'ETB',
    status: 'completed',
    paymentMethod: 'telebirr',
    customer: { name: 'A', email: 'a@example.com', phone: '251900000000' },
    paidAt: '2026-01-01T00:00:00.000Z',
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  return { body, headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, SECRET) } };
};

interface Sent {
  ms: number[];
  statuses: Record<string, number>;
  errors: number;
  wallMs: number;
}

/** Send `count` distinct deliveries, at most `inFlight` at once, round robin over `ports`; time each answer. */
async function send(ports: number[], prefix: string, count: number, inFlight: number): Promise<Sent> {
  const items = Array.from({ length: count }, (_, i) => delivery(`${prefix}_${i}`));
  const ms: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(inFlight, count) }, async () => {
      while (next < count) {
        const i = next++;
        const { body, headers } = items[i]!;
        const t0 = performance.now();
        let reply: Reply;
        try {
          reply = await post(ports[i % ports.length]!, body, headers);
        } catch {
          errors++;
          continue;
        }
        ms.push(performance.now() - t0);
        const key = `${reply.status} ${reply.outcome}`;
        statuses[key] = (statuses[key] ?? 0) + 1;
      }
    }),
  );
  return { ms, statuses, errors, wallMs: performance.now() - started };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

// ---- 1. Answer time with 30 s handlers -------------------------------------------------------

interface AnswerRow {
  receiver: string;
  deliveries: number;
  inFlight: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  statuses: Record<string, number>;
  errors: number;
}

async function answerTime(pool: pg.Pool, label: string, engine: Engine | 'in-process'): Promise<AnswerRow> {
  await roomFor(pool, 2 * PER_CHILD + 4);
  const env = configEnv(engine === 'in-process' ? 'bullmq' : engine, `slow_${engine}`);
  const web = await spawnChild(
    WEB,
    engine === 'in-process' ? { ...env, CHILD_IN_PROCESS: '1', CHILD_HANDLER_MS: String(SLOW_HANDLER_MS) } : env,
  );
  const started = [web];
  try {
    if (engine !== 'in-process') {
      started.push(
        await spawnChild(WORKER, { ...env, CHILD_HANDLER_MS: String(SLOW_HANDLER_MS), CHILD_EFFECT: 'plain', CHILD_CONCURRENCY: '4' }),
      );
    }
    await send([web.port], `${env.QUEUE_NAME}_warm`, WARM_UP, WARM_UP);
    const r = await send([web.port], env.QUEUE_NAME!, SLOW_DELIVERIES, SLOW_IN_FLIGHT);
    const row = {
      receiver: label,
      deliveries: SLOW_DELIVERIES,
      inFlight: SLOW_IN_FLIGHT,
      p50Ms: pct(r.ms, 50),
      p99Ms: pct(r.ms, 99),
      maxMs: Math.max(...r.ms),
      statuses: r.statuses,
      errors: r.errors,
    };
    log(row);
    return row;
  } finally {
    await stopAll(started);
  }
}

// ---- 2. Throughput --------------------------------------------------------------------------

interface ThroughputRow {
  engine: Engine;
  workers: number;
  round: number;
  events: number;
  acceptedPerSecond: number;
  acceptP50Ms: number;
  acceptP99Ms: number;
  acceptStatuses: Record<string, number>;
  acceptErrors: number;
  /** Jobs in the queue when the workers started: the events and the warm-up deliveries. */
  jobs: number;
  /** All jobs / (first .. last effect row), every worker up before the first job could be taken. */
  processedPerSecond: number;
  /** Rows / (release of the held jobs .. last effect row): counts an idle pg-boss slot's wait (up to 0.5 s) to notice them. */
  fromRelease: number;
  /** From spawning the workers to the last of them printing READY. */
  workerStartMs: number;
  /** Effect rows found in the end (should be `jobs`: one per event). */
  effects: number;
}

async function throughput(effects: pg.Pool, engine: Engine, workers: number, round: number): Promise<ThroughputRow> {
  const env = configEnv(engine, `${engine}_w${workers}_r${round}`);
  const run = env.CHILD_RUN!;
  await roomFor(effects, WEB_PROCESSES * PER_CHILD + 2);
  const webs = await Promise.all(Array.from({ length: WEB_PROCESSES }, () => spawnChild(WEB, env)));
  const started = [...webs];
  let workerProcesses: ChildReceiver[] = [];
  try {
    const ports = webs.map((w) => w.port);
    const warm = await send(ports, `${run}_warm`, WARM_UP * webs.length, WARM_UP * webs.length);
    const sent = await send(ports, run, EVENTS, IN_FLIGHT);
    const queued = (sent.statuses['200 queued'] ?? 0) + (warm.statuses['200 queued'] ?? 0);
    const acceptedPerSecond = (sent.statuses['200 queued'] ?? 0) / (sent.wallMs / 1000);
    log(
      engine,
      `${workers} worker(s), round ${round}: accepted ${sent.statuses['200 queued'] ?? 0}/${EVENTS} at ${acceptedPerSecond.toFixed(0)}/s`,
      sent.statuses,
      sent.errors ? `${sent.errors} errors` : '',
    );

    // The web processes have nothing more to do: stop them, and their connections, before the workers start.
    await stopAll(webs);
    await roomFor(effects, workers * PER_CHILD + 2);
    // Workers that start first would take the backlog before the last one is up: hold the jobs
    // until every worker is ready. BullMQ pauses its queue; pg-boss has no pause, so its jobs'
    // start_after is pushed out of reach and put back (a bench's reach into pg-boss's table).
    const bull = engine === 'bullmq' ? new Queue(env.QUEUE_NAME!, { connection: redisConnection() }) : undefined;
    const bossJobs = (startAfter: string) =>
      effects.query(`update pgboss.job set start_after = ${startAfter} where name = $1 and state = 'created'`, [env.QUEUE_NAME]);
    await (bull ? bull.pause() : bossJobs(`now() + interval '1 day'`));
    const spawnedAt = Date.now();
    const ws = await Promise.all(
      Array.from({ length: workers }, () =>
        spawnChild(WORKER, {
          ...env,
          CHILD_EFFECT: 'transactional',
          CHILD_HANDLER_MS: String(HANDLER_MS),
          CHILD_CONCURRENCY: String(CONCURRENCY),
        }),
      ),
    );
    workerProcesses = ws;
    const readyAt = Date.now();
    await (bull ? bull.resume() : bossJobs('now()'));
    await bull?.close();
    // Done records of the events (not of the web's `queued:` keys), each committed with its effect row: a small table to poll.
    const count = async () =>
      Number(
        (await effects.query(`select count(*)::int as n from "${env.CHILD_TABLE}" where state = 'done' and key not like 'queued:%'`))
          .rows[0].n,
      );
    const until = Date.now() + DRAIN_TIMEOUT_MS;
    let n = 0;
    while ((n = await count()) < queued && Date.now() < until) await sleep(200);
    if (n < queued) log(`${engine} ${workers} worker(s): only ${n}/${queued} done after ${DRAIN_TIMEOUT_MS / 1000} s`);
    const { rows } = await effects.query(
      `select count(*)::int as n,
              count(*) filter (where at >= to_timestamp($2::float8 / 1000))::int as after_ready,
              extract(epoch from min(at)) * 1000 as first, extract(epoch from max(at)) * 1000 as last
         from payhook_test_effects where run = $1`,
      [run, readyAt],
    );
    const e = rows[0] as { n: number; after_ready: number; first: string; last: string };
    const last = Number(e.last);
    const row: ThroughputRow = {
      engine,
      workers,
      round,
      events: EVENTS,
      acceptedPerSecond,
      acceptP50Ms: pct(sent.ms, 50),
      acceptP99Ms: pct(sent.ms, 99),
      acceptStatuses: sent.statuses,
      acceptErrors: sent.errors,
      jobs: queued,
      processedPerSecond: e.n / ((last - Number(e.first)) / 1000),
      fromRelease: e.after_ready / ((last - readyAt) / 1000),
      workerStartMs: readyAt - spawnedAt,
      effects: e.n,
    };
    log(row);
    return row;
  } finally {
    await stopAll([...started, ...workerProcesses]);
  }
}

// ---- Clean-up -------------------------------------------------------------------------------

function redisConnection() {
  const u = new URL(REDIS_URL);
  return { host: u.hostname, port: Number(u.port || 6379) };
}

async function cleanUp(effects: pg.Pool | undefined) {
  for (const { engine, name } of created.queues) {
    if (engine !== 'bullmq') continue;
    for (const q of [name, `${name}-dead-letter`]) {
      const queue = new Queue(q, { connection: redisConnection() });
      await queue.obliterate({ force: true }).catch((e: Error) => log(`could not obliterate ${q}: ${e.message}`));
      await queue.close();
    }
  }
  if (!effects) return;
  // pg-boss 10's deleteQueue refuses a queue that still has jobs (its job partitions reference the
  // queue ON DELETE RESTRICT), and has no call that deletes them all: delete them here, then the
  // queue, then its dead-letter queue (which the queue references).
  const boss = created.queues.filter((q) => q.engine === 'pg-boss').flatMap(({ name }) => [name, `${name}-dead-letter`]);
  if (boss.length > 0) {
    try {
      await effects.query('delete from pgboss.job where name = any($1)', [boss]);
      await effects.query('delete from pgboss.archive where name = any($1)', [boss]);
      for (const q of boss) await effects.query('select pgboss.delete_queue(name) from pgboss.queue where name = $1', [q]);
    } catch (e) {
      log(`could not delete the pg-boss queues: ${(e as Error).message}`);
    }
  }
  await effects.query('delete from payhook_test_effects where run = any($1)', [created.runs]);
  for (const t of new Set(created.tables)) await effects.query(`drop table if exists "${t}"`);
}

// ---- Main -----------------------------------------------------------------------------------

const fmt = (x: number, digits = 0) =>
  Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a';
const ms = (x: number) => (x >= 1000 ? `${fmt(x / 1000, 2)} s` : `${fmt(x, 1)} ms`);

async function main() {
  const t0 = performance.now();
  const loadStart = os.loadavg();
  let effects: pg.Pool | undefined;
  const stop = () => {
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    // The first connection, too, may meet a full server (see roomFor).
    for (let tries = 0; !effects; tries++) {
      effects = await effectsTable(DATABASE_URL).catch(async (e: Error) => {
        if (tries >= 120 || !/too many clients/.test(e.message)) throw e;
        if (tries === 0) log('waiting for a free Postgres connection');
        await sleep(1000);
        return undefined;
      });
    }
    log(`run ${RUN}: part 1, ${SLOW_DELIVERIES} deliveries at ${SLOW_IN_FLIGHT} in flight, handlers of ${SLOW_HANDLER_MS} ms`);
    const answers: AnswerRow[] = [];
    if (SLOW_DELIVERIES > 0) {
      if (IN_PROCESS) answers.push(await answerTime(effects, 'in-process receiver (answers 202 at its 8 s budget)', 'in-process'));
      for (const engine of ENGINES)
        answers.push(await answerTime(effects, `${engine === 'bullmq' ? 'BullMQ' : 'pg-boss'} handoff (200 queued)`, engine));
    }

    log(
      `part 2, ${EVENTS} events per configuration to ${WEB_PROCESSES} web processes at ${IN_FLIGHT} in flight; workers of concurrency ${CONCURRENCY}, handler ${HANDLER_MS} ms`,
    );
    const rows: ThroughputRow[] = [];
    // Rounds in alternating order (1 2 4, then 4 2 1; the engines interleaved), so that a machine
    // getting busier or quieter over the run does not pass for an effect of the worker count.
    const order = EVENTS > 0 ? WORKERS.flatMap((w) => ENGINES.map((e) => [e, w] as const)) : [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [engine, w] of round % 2 === 1 ? order : [...order].reverse()) rows.push(await throughput(effects, engine, w, round));
    }

    const totalSeconds = (performance.now() - t0) / 1000;
    const inProcess = IN_PROCESS ? answers[0] : undefined;
    const out: string[] = [];
    if (answers.length > 0)
      out.push(
        `Answer time, handlers of ${SLOW_HANDLER_MS / 1000} s: ${SLOW_DELIVERIES} deliveries, ${SLOW_IN_FLIGHT} in flight, keep-alive, loopback`,
        '',
      );
    if (answers.length > 0)
      out.push('| receiver | p50 | p99 | answers | in-process / this, p50 | in-process / this, p99 |', '|---|---:|---:|---|---:|---:|');
    for (const a of answers) {
      const answersText =
        Object.entries(a.statuses)
          .map(([k, v]) => `${v} × ${k}`)
          .join(', ') + (a.errors ? `, ${a.errors} errors` : '');
      const ratio = (x: number | undefined, y: number) => (a === inProcess ? '1' : x === undefined ? 'not run' : `${fmt(x / y, 0)}x`);
      out.push(
        `| ${a.receiver} | ${ms(a.p50Ms)} | ${ms(a.p99Ms)} | ${answersText} | ${ratio(inProcess?.p50Ms, a.p50Ms)} | ${ratio(inProcess?.p99Ms, a.p99Ms)} |`,
      );
    }
    if (rows.length > 0)
      out.push(
        '',
        `Throughput: ${EVENTS.toLocaleString('en-US')} events per configuration, ${WEB_PROCESSES} web processes at ${IN_FLIGHT} in flight; workers of concurrency ${CONCURRENCY}, handler ${HANDLER_MS} ms with a transactional effect row; mean of ${ROUNDS} round(s) (each round's figure in brackets)`,
        '',
      );
    if (rows.length > 0)
      out.push(
        '| engine | workers | accepted/s | processed/s | processed/s vs 1 worker | processed / accepted |',
        '|---|---:|---:|---:|---:|---:|',
      );
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const summary = ENGINES.flatMap((engine) =>
      WORKERS.map((workers) => {
        const rs = rows.filter((r) => r.engine === engine && r.workers === workers).sort((a, b) => a.round - b.round);
        const accepted = rs.map((r) => r.acceptedPerSecond);
        const processed = rs.map((r) => r.processedPerSecond);
        return { engine, workers, accepted, processed, acceptedPerSecond: mean(accepted), processedPerSecond: mean(processed) };
      }),
    );
    const each = (xs: number[]) => (xs.length > 1 ? ` (${xs.map((x) => fmt(x)).join(', ')})` : '');
    for (const r of rows.length > 0 ? summary : []) {
      const one = summary.find((x) => x.engine === r.engine && x.workers === 1);
      out.push(
        `| ${r.engine} | ${r.workers} | ${fmt(r.acceptedPerSecond)}${each(r.accepted)} | ${fmt(r.processedPerSecond)}${each(r.processed)} | ${one ? `${fmt(r.processedPerSecond / one.processedPerSecond, 2)}x` : 'n/a'} | ${fmt(r.processedPerSecond / r.acceptedPerSecond, 2)} |`,
      );
    }
    const machine = `${os.cpus()[0]?.model.trim() ?? '?'}, ${os.cpus().length} logical cores, Node ${process.version}, load average ${loadStart.map((x) => x.toFixed(2)).join(' ')} at start, ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} at end, ${fmt(totalSeconds)} s in all`;
    out.push('', machine);
    console.log(out.join('\n'));
    const problems = rows.filter((r) => r.effects !== r.jobs || r.acceptErrors > 0 || (r.acceptStatuses['200 queued'] ?? 0) !== r.events);
    console.log(
      JSON.stringify(
        {
          run: RUN,
          machine,
          totalSeconds,
          settings: {
            SLOW_DELIVERIES,
            SLOW_IN_FLIGHT,
            SLOW_HANDLER_MS,
            EVENTS,
            ROUNDS,
            IN_FLIGHT,
            WEB_PROCESSES,
            CONCURRENCY,
            HANDLER_MS,
            WORKERS,
            ENGINES,
          },
          answers,
          summary,
          throughput: rows,
        },
        null,
        2,
      ),
    );
    if (problems.length > 0) {
      log(
        'some configurations did not accept or process every event:',
        problems.map((p) => `${p.engine} w${p.workers} r${p.round}`).join(', '),
      );
      process.exitCode = 1;
    }
  } finally {
    await stopAll();
    await cleanUp(effects).catch((e: Error) => log(`clean-up: ${e.message}`));
    await effects?.end();
  }
}

await main();
// The post() agent keeps sockets alive; nothing else is left to wait for.
process.exit(process.exitCode ?? 0);
