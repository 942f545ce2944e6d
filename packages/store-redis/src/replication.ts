import { positiveMs, type PrimaryIdentity, type StoreLog } from '@payhook/core/store';
import type { Cluster, Redis } from 'ioredis';
import type { StoreScript } from './scripted-store.js';

const NAME = '[@payhook/store-redis]';

// The store and Redis's replicas: the wait that keeps a failover from forgetting, the check that says when nothing does, and who the primary is.

export interface ReplicaWait {
  /** How many replicas must hold a write before it counts. */
  count: number;
  /** Longest wait for them. Default 1000 ms. Past it the call fails: a claim is answered 503, and the service retries. */
  timeoutMs?: number;
}

/** The scripts whose writes must outlive a failover: a claim (or a copy runs beside it), a done record, a longer lease. */
const WAITED = new Set(['payhookClaimV1', 'payhookCompleteV2', 'payhookExtendV1']);

/** Fewer replicas than `waitForReplicas` asks for confirmed a write in time. */
export class ReplicaWaitError extends Error {}

type Commands = Record<string, (...a: unknown[]) => unknown>;

interface Queued {
  script: StoreScript;
  keys: readonly string[];
  args: readonly (string | number)[];
  resolve(reply: unknown): void;
  reject(error: unknown): void;
}

/**
 * Runs a store script, and, for the scripts that write what a failover must keep, Redis `WAIT`
 * behind it: the call resolves once `count` replicas have the write, and fails when fewer had it
 * within the timeout. `WAIT` blocks its connection until it returns, so the writes of deliveries
 * in flight share one: those that come while a `WAIT` is out go, all together, in one pipeline
 * behind it with one `WAIT` of their own, which covers every write before it on the connection.
 * (On a Cluster each write is its own pipeline, to its key's slot.)
 */
export function replicatedRun(client: Redis | Cluster, { count, timeoutMs }: Required<ReplicaWait>) {
  const commands = client as unknown as Commands;
  let queued: Queued[] = [];
  let waiting = false;
  // A WAIT answers for the writes of its own connection: one sent again on a new connection (a
  // client that resends unanswered commands) would confirm nothing. Replaced, the batch fails.
  let connections = 0;
  client.on('close', () => connections++);
  /** The writes, then one WAIT, in one pipeline; resolves when all are settled. */
  const flush = (batch: Queued[]): Promise<void> => {
    const pipeline = client.pipeline() as unknown as Commands & {
      wait(n: number, ms: number): unknown;
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    for (const q of batch) pipeline[q.script.name]!(...q.keys, ...q.args);
    pipeline.wait(count, timeoutMs);
    const on = connections;
    return pipeline.exec().then(
      (replies) => settle(batch, replies ?? [], count, timeoutMs, on !== connections),
      (error: unknown) => {
        for (const q of batch) q.reject(error);
      },
    );
  };
  const send = () => {
    if (waiting || queued.length === 0) return;
    const batch = queued;
    queued = [];
    waiting = true;
    void flush(batch).finally(() => {
      waiting = false;
      send();
    });
  };
  return (script: StoreScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> => {
    if (!WAITED.has(script.name)) return commands[script.name]!(...keys, ...args) as Promise<unknown>;
    return new Promise((resolve, reject) => {
      const q = { script, keys, args, resolve, reject };
      // A Cluster's batch would span slots: there each write has its own pipeline, to its key's slot.
      if (client.isCluster) void flush([q]);
      else {
        queued.push(q);
        send();
      }
    });
  };
}

/** Each write's own reply, unless the `WAIT` behind them all saw fewer replicas than asked for. */
function settle(batch: Queued[], replies: [Error | null, unknown][], count: number, timeoutMs: number, replaced: boolean) {
  const waitReply = replies[batch.length];
  const acked = Number(waitReply?.[1] ?? 0);
  const short = replaced
    ? new ReplicaWaitError('the connection to Redis was replaced before the replicas confirmed the write')
    : waitReply?.[0] || acked < count
      ? new ReplicaWaitError(
          `${acked} of the ${count} replica(s) waitForReplicas asks for confirmed the write within ${timeoutMs} ms` +
            (waitReply?.[0] ? ` (${waitReply[0].message})` : ''),
        )
      : undefined;
  batch.forEach((q, i) => {
    const reply = replies[i];
    if (!reply || reply[0]) q.reject(reply?.[0] ?? new Error('the pipeline gave no reply'));
    else if (short) q.reject(short);
    else q.resolve(reply[1]);
  });
}

/** The option, checked: a whole count of 1 or more, a timeout (default 1000 ms). */
export function replicaWait(wait: ReplicaWait): Required<ReplicaWait> {
  if (!Number.isInteger(wait.count) || wait.count < 1) {
    throw new TypeError(`${NAME} waitForReplicas.count must be a whole number of replicas, 1 or more (got ${String(wait.count)}).`);
  }
  return { count: wait.count, timeoutMs: positiveMs(wait.timeoutMs ?? 1_000, 'waitForReplicas.timeoutMs', NAME) };
}

/** The fields of one `INFO` (every default section), or undefined where Redis refuses it. */
export async function readInfo(client: Redis | Cluster): Promise<Map<string, string> | undefined> {
  let reply: string;
  try {
    reply = await client.info();
  } catch {
    return undefined;
  }
  const fields = new Map<string, string>();
  for (const line of reply.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  return fields;
}

/**
 * Warn once about what a failover would forget: replicas the store does not wait for, or a wait
 * for more replicas than are there (every claim then times out). Silent without replicas.
 */
export function checkReplication(fields: Map<string, string>, wait: ReplicaWait | undefined, log: StoreLog): void {
  if (fields.get('role') !== 'master') return;
  const replicas = Number(fields.get('connected_slaves') ?? 0);
  if (wait && replicas < wait.count) {
    log.error(
      `${NAME} waitForReplicas asks for ${wait.count} replica(s), and Redis has ${replicas} connected: every claim waits its timeout and is answered 503 until enough replicas are back. Lower waitForReplicas.count, or connect the replicas.`,
    );
  } else if (!wait && replicas > 0) {
    log.warn(
      `${NAME} Redis has ${replicas} asynchronous replica(s), and the store answers before they have its writes: a failover to one forgets the done records of its last moments (the replica's lag: with 250 ms, 118 to 150 of 300 events ran twice in our fault test), and copies of those events run again. ` +
        'Pass waitForReplicas: { count: 1 } to redisStore() so a delivery is answered only once a replica has it, or checkDurability: false to silence this.',
    );
  }
}

/** Who this Redis is: a restart changes `run_id`; a promoted replica also carries its old primary's replication id as `master_replid2`. */
export function redisIdentity(fields: Map<string, string>): PrimaryIdentity | undefined {
  const runId = fields.get('run_id');
  if (!runId || fields.get('role') !== 'master') return undefined;
  const replid = fields.get('master_replid') ?? '';
  const replid2 = fields.get('master_replid2') ?? '';
  const identity = {
    id: runId,
    replid,
    describe(before: PrimaryIdentity) {
      const old = (before as typeof identity).replid;
      const how =
        old && replid2 === old ? 'a replica promoted in place of the one before' : 'restarted, or another server at the same address';
      return `run_id ${before.id.slice(0, 12)}… → ${runId.slice(0, 12)}…, ${how}`;
    },
  };
  return identity;
}
