/**
 * A web process that hands every event to the queue (see queue.ts for the queue's env), bundled and
 * run by Node (startChild). Also:
 *
 *   CHILD_SECRET      the webhook secret
 *   CHILD_LEASE_MS, CHILD_BUDGET_MS
 *   CHILD_HANG_AT     before-enqueue: after the claim, before the job is sent, print
 *                     `POINT before-enqueue` and hang, for the parent to kill -9 this process
 *   CHILD_HANG_REF    hang only for this reference (default: every event)
 *   CHILD_IN_PROCESS  1: no queue; run a handler of CHILD_HANDLER_MS here (the in-process receiver, for the benchmark)
 *
 * Prints `READY <port>` once it listens on 127.0.0.1.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, type DeliveryReport } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import type { Handoff } from '@payhook/core/queue';
import { env, point, queue, store } from './queue.js';

const hangAt = process.env.CHILD_HANG_AT ?? '';
const hangRef = process.env.CHILD_HANG_REF;
const inProcess = process.env.CHILD_IN_PROCESS === '1';
const handlerMs = Number(process.env.CHILD_HANDLER_MS ?? 0);

const handoff: Handoff =
  hangAt === 'before-enqueue'
    ? {
        async enqueue(job, ctx) {
          if (hangRef === undefined || job.event.reference === hangRef) await point('before-enqueue');
          return queue.enqueue(job, ctx);
        },
      }
    : queue;

const receiver = createReceiver({
  secret: env('CHILD_SECRET'),
  store,
  handoff: inProcess ? undefined : handoff,
  leaseMs: Number(env('CHILD_LEASE_MS', '30000')),
  budgetMs: Number(env('CHILD_BUDGET_MS', '8000')),
  logger: {
    warn() {},
    error: (fields: DeliveryReport & { err?: unknown }, message: string) =>
      console.error(message, fields.outcome, fields.dedupeKey, String(fields.err)),
  },
});
if (inProcess) receiver.onAny(() => new Promise((resolve) => setTimeout(resolve, handlerMs)));

const server = createServer(toNodeListener(receiver));
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
