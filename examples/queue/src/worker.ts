/**
 * A worker process: takes the events the web process queued and runs the handlers, each event
 * once. Start as many as you like, on as many machines.
 *
 *   WORKER_CONCURRENCY  jobs at once in this process, default 4
 *   and the queue's settings (src/setup.ts)
 *
 * A handler that throws is retried with the queue's backoff (8 attempts by default); one that
 * throws NonRetriableError, or fails its last attempt, goes to the dead-letter queue,
 * `<QUEUE_NAME>-dead-letter`, to be looked at by a person.
 */
import { NonRetriableError } from '@payhook/core';
import { createWorker as bullmqWorker } from '@payhook/queue-bullmq';
import { createWorker as pgBossWorker } from '@payhook/queue-pg-boss';
import { closeOnSignal, connectQueue, createTables, logLines, ORDERS, PAYMENTS, queue, store } from './setup.js';

const concurrency = Number(process.env.WORKER_CONCURRENCY ?? 4);
const options = { store, concurrency, logger: logLines('worker') };
const worker =
  queue.engine === 'pg-boss' ? pgBossWorker({ ...options, queue: queue.queue }) : bullmqWorker({ ...options, queue: queue.queue });

/**
 * The order's update and its payment row commit in one transaction with the event's done record:
 * a worker killed at any point leaves all three or none, and the job's next run finds the event
 * done or runs it afresh. Every statement goes through `db`, the transaction's client.
 */
const markPaid = store.transactional<'payment.success'>(async (event, ctx, db) => {
  const paid = await db.query(
    `update ${ORDERS} set status = 'paid', payment_reference = $2, paid_at = now()
      where id = $1 and status = 'pending' and amount = $3::numeric`,
    [event.merchantReference, event.reference, event.amount],
  );
  if (paid.rowCount !== 1) {
    // Nothing a retry could change: straight to the dead letters.
    const { rows } = await db.query<{ status: string; amount: string }>(`select status, amount::text from ${ORDERS} where id = $1`, [
      event.merchantReference,
    ]);
    const order = rows[0];
    throw new NonRetriableError(
      order
        ? `order ${event.merchantReference} is ${order.status} for ${order.amount}; the payment ${event.reference} is for ${event.amount}`
        : `no order ${event.merchantReference} for the payment ${event.reference}`,
    );
  }
  await db.query(`insert into ${PAYMENTS} (order_id, reference, amount, job_id, attempt) values ($1, $2, $3, $4, $5)`, [
    event.merchantReference,
    event.reference,
    event.amount,
    ctx.job?.id ?? '',
    ctx.job?.attempt ?? 0,
  ]);
});

worker.on('payment.success', async (event, ctx) => {
  await markPaid(event, ctx);
  // Committed: say so (the example's test waits for this line).
  const job = ctx.job!;
  console.log(
    `[queue:worker] order ${event.merchantReference} paid by ${event.reference} (job ${job.id}, attempt ${job.attempt} of ${job.maxAttempts})`,
  );
});

closeOnSignal(() => worker.close());
await createTables();
await connectQueue();
await worker.start();
console.log(`[queue:worker] taking jobs from ${queue.queue.name} (${queue.engine}, ${concurrency} at a time)`);
