import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEvent, signedBody } from '@payhook/testing';
import { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '@payhook/test-support/apps/examples';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';

/**
 * examples/queue as its README starts it: `pnpm --dir examples/queue web` and `… worker`, two
 * processes, on each engine. Deliveries go to the web process over HTTP; what the worker did is
 * read back through the web process's `GET /orders/:id`.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const SECRET = 'whsec_example_queue';
const READY_WITHIN_MS = 30_000;

const pgUrl = await requirePostgres();
const redisUrl = await requireRedis();

interface Started {
  output(): string;
  /** Resolves with the first match of `pattern` in the output from now on or already there; rejects if the process exits first. */
  waitFor(pattern: RegExp, withinMs?: number): Promise<RegExpMatchArray>;
  stop(): Promise<void>;
}

/** Run one of the example's scripts in a process group of its own, as a user would in a terminal. */
function startScript(script: 'web' | 'worker', env: Record<string, string>): Started {
  const child: ChildProcess = spawn(join(root, 'node_modules/.bin/pnpm'), ['--dir', 'examples/queue', script], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const append = (d: Buffer) => (output += d);
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    output: () => output,
    waitFor(pattern, withinMs = 15_000) {
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          child.stdout!.off('data', check);
          child.stderr!.off('data', check);
        };
        const check = () => {
          const match = pattern.exec(output);
          if (match) {
            done();
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`examples/queue ${script}: no ${pattern} within ${withinMs} ms:\n${output}`));
        }, withinMs);
        child.stdout!.on('data', check);
        child.stderr!.on('data', check);
        void exited.then(() => {
          done();
          reject(new Error(`examples/queue ${script} exited (${child.exitCode ?? child.signalCode}) before ${pattern}:\n${output}`));
        });
        check();
      });
    },
    async stop() {
      if (!running()) return;
      process.kill(-child.pid!, 'SIGTERM');
      // It closes its queue and pools on SIGTERM; one that hangs is not what this test is about.
      const timer = setTimeout(() => running() && process.kill(-child.pid!, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const engines = [
  { engine: 'pg-boss', skip: !pgUrl },
  { engine: 'bullmq', skip: !pgUrl || !redisUrl },
] as const;

describe.each(engines)('examples/queue on $engine: a web process and a worker', ({ engine, skip }) => {
  const queueName = `example-queue-${engine}-${process.pid}-${Date.now()}`;
  let web: Started | undefined;
  let worker: Started | undefined;
  let url: string;
  let pool: pg.Pool;

  beforeAll(async () => {
    if (skip) return;
    pool = new pg.Pool({ connectionString: pgUrl, max: 2 });
    const port = await freePort();
    const env = {
      QUEUE_ENGINE: engine,
      QUEUE_NAME: queueName,
      DATABASE_URL: pgUrl!,
      REDIS_URL: redisUrl ?? '',
      PAYHOOK_WEBHOOK_SECRET: SECRET,
      PORT: String(port),
      LOG_LEVEL: 'debug',
    };
    web = startScript('web', env);
    worker = startScript('worker', env);
    url = (await web.waitFor(/listening on (http:\/\/\S+)/, READY_WITHIN_MS))[1]!;
    await worker.waitFor(/taking jobs from/, READY_WITHIN_MS);
  }, READY_WITHIN_MS + 15_000);

  afterAll(async () => {
    await Promise.all([web?.stop(), worker?.stop()]);
    if (skip) return;
    const names = [queueName, `${queueName}-dead-letter`];
    if (engine === 'bullmq') {
      const u = new URL(redisUrl!);
      for (const name of names) {
        const q = new Queue(name, { connection: { host: u.hostname, port: Number(u.port || 6379) } });
        await q.obliterate({ force: true }).catch(() => {});
        await q.close();
      }
    } else {
      // delete_queue refuses a queue that still has jobs.
      await pool.query('delete from pgboss.job where name = any($1)', [names]).catch(() => {});
      for (const name of names) await pool.query('select pgboss.delete_queue($1)', [name]).catch(() => {});
    }
    await pool.query('delete from queue_example_payments where order_id like $1', [`${queueName}-%`]).catch(() => {});
    await pool.query('delete from queue_example_orders where id like $1', [`${queueName}-%`]).catch(() => {});
    await pool.end();
  }, 30_000);

  const deliver = async (event: object) => {
    // An event object is signed as its JSON text.
    const { body, headers } = signedBody(event, { secret: SECRET });
    const res = await fetch(`${url}/webhooks`, { method: 'POST', headers, body: body as string });
    return { status: res.status, outcome: ((await res.json()) as { outcome: string }).outcome };
  };
  const newOrder = async (id: string, amount: string) => {
    const res = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, amount }),
    });
    expect(res.status).toBe(201);
  };
  const order = async (id: string) => (await fetch(`${url}/orders/${id}`)).json();
  const paidLines = (reference: string) =>
    worker!
      .output()
      .split('\n')
      .filter((l) => l.includes(`paid by ${reference}`)).length;

  it.skipIf(skip)('answers 200 queued, the worker marks the order paid once, and a copy is 200 duplicate', async () => {
    const id = `${queueName}-order-1`;
    await newOrder(id, '1500.00');
    const event = createEvent('payment.success', { merchantReference: id, amount: '1500.00' });

    expect(await deliver(event)).toEqual({ status: 200, outcome: 'queued' });
    await worker!.waitFor(new RegExp(`order ${id} paid by ${event.reference} \\(job \\S+, attempt 1 of 8\\)`));
    expect(await order(id)).toMatchObject({
      id,
      status: 'paid',
      paymentReference: event.reference,
      payments: [{ reference: event.reference, amount: '1500.00', attempt: 1 }],
    });

    // The service's copy of the same delivery: answered by the web process, nothing queued.
    expect(await deliver(event)).toEqual({ status: 200, outcome: 'duplicate' });
    expect((await order(id)).payments).toHaveLength(1);
    expect(paidLines(event.reference)).toBe(1);
  });

  it.skipIf(skip)('five copies at once: one is queued, the others wait or are duplicates; paid once', async () => {
    const id = `${queueName}-order-2`;
    await newOrder(id, '250.00');
    const event = createEvent('payment.success', { merchantReference: id, amount: '250.00' });

    const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(event)));
    expect(answers.filter((a) => a.outcome === 'queued')).toHaveLength(1);
    for (const a of answers) expect(['queued', 'duplicate', 'in-progress']).toContain(a.outcome);
    await worker!.waitFor(new RegExp(`order ${id} paid by ${event.reference}`));
    // The service retries a 409; by now each retry is a duplicate.
    expect(await deliver(event)).toEqual({ status: 200, outcome: 'duplicate' });
    expect((await order(id)).payments).toHaveLength(1);
    expect(paidLines(event.reference)).toBe(1);
  });

  it.skipIf(skip)('a payment for an order that does not exist goes to the dead-letter queue at once', async () => {
    const id = `${queueName}-no-such-order`;
    const event = createEvent('payment.success', { merchantReference: id });

    expect(await deliver(event)).toEqual({ status: 200, outcome: 'queued' });
    await worker!.waitFor(
      new RegExp(
        `payment\\.success ${event.reference}: job \\S+ of queue ${queueName}: rejected, attempt 1 of 8; it goes to the dead-letter queue \\(no order ${id}`,
      ),
    );
    // The worker adds the dead letter just after it logs the verdict.
    await vi.waitFor(async () => expect(await deadLetters(engine, queueName, pool)).toContain(event.reference), {
      timeout: 5_000,
      interval: 100,
    });
    expect(await (await fetch(`${url}/orders/${id}`)).json()).toEqual({ error: `no order ${id}` });
  });
});

/** The references of the events in the queue's dead-letter queue, read from the engine. */
async function deadLetters(engine: 'pg-boss' | 'bullmq', queueName: string, pool: pg.Pool): Promise<string[]> {
  if (engine === 'pg-boss') {
    const { rows } = await pool.query<{ reference: string }>(
      "select data->'event'->>'reference' as reference from pgboss.job where name = $1",
      [`${queueName}-dead-letter`],
    );
    return rows.map((r) => r.reference);
  }
  const u = new URL(redisUrl!);
  const q = new Queue(`${queueName}-dead-letter`, { connection: { host: u.hostname, port: Number(u.port || 6379) } });
  try {
    const jobs = await q.getJobs(['waiting', 'delayed', 'completed', 'failed', 'active', 'prioritized']);
    return jobs.map((j) => (j.data as { event: { reference: string } }).event.reference);
  } finally {
    await q.close();
  }
}
