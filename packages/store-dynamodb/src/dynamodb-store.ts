import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { DEFAULT_RETENTION_MS, positiveMs, storedOutcome, within } from '@payhook/core/store';
import type { ClaimResult, Store, StoreRecord } from '@payhook/core/store';

const NAME = '[@payhook/store-dynamodb]';

/** What `dynamoStore` takes: the table; the rest have defaults. */
export interface DynamoStoreOptions {
  /** The table: partition key `pk` (String), and `ttl` as its TTL attribute (README). */
  table: string;
  /** A DynamoDB client you made (region, credentials, endpoint); else the store makes one from the environment, as Lambda sets it. */
  client?: DynamoDBClient;
  /** Put before every key, so several receivers can share a table. Default none. */
  prefix?: string;
  /** How long done and released records are kept. Default 30 days (`DEFAULT_RETENTION_MS`). */
  retentionMs?: number;
  /** Longest wait for one answer from DynamoDB. Default 2000 ms, under the receiver's budget. */
  timeoutMs?: number;
  /** The clock, epoch ms, for tests. Default `Date.now`. */
  now?: () => number;
}

export interface DynamoStore extends Store {
  /** The DynamoDB client: yours, or the one the store made. */
  readonly client: DynamoDBClient;
  /** Destroys the client when the store made it. */
  close(): Promise<void>;
}

type Item = Record<string, AttributeValue>;
const S = (s: string): AttributeValue => ({ S: s });
const N = (n: number): AttributeValue => ({ N: String(n) });
const num = (v: AttributeValue | undefined) => Number(v?.N);

/**
 * The store contract on DynamoDB, for AWS Lambda: one item per dedupe key, changed only by
 * conditional writes, so two Lambda instances never both claim a key. A new delivery costs one
 * write to claim and one to complete; a copy of a running or done event costs one failed write
 * and one consistent read. DynamoDB's TTL (the `ttl` attribute) deletes records past their
 * retention; until it does, the store treats them as gone.
 *
 * @example
 * import { createReceiver } from '@payhook/core';
 * import { dynamoStore } from '@payhook/store-dynamodb';
 *
 * const store = dynamoStore({ table: process.env.PAYHOOK_TABLE! });
 * const receiver = createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET!, store });
 */
export function dynamoStore(options: DynamoStoreOptions): DynamoStore {
  const { table } = options;
  if (typeof table !== 'string' || !/^[A-Za-z0-9_.-]{3,255}$/.test(table)) {
    throw new TypeError(
      `${NAME} table must be a DynamoDB table name (3 to 255 letters, digits, _ . -); got ${JSON.stringify(table ?? null)}. Create the table with partition key pk (String) and TTL on ttl (README), and pass its name.`,
    );
  }
  const retentionMs = positiveMs(options.retentionMs ?? DEFAULT_RETENTION_MS, 'retentionMs', NAME);
  const timeoutMs = positiveMs(options.timeoutMs ?? 2_000, 'timeoutMs', NAME);
  const prefix = options.prefix ?? '';
  const now = options.now ?? Date.now;
  const owned = !options.client;
  // No retries of its own beyond one (the service retries), and no wait past the budget.
  const client =
    options.client ?? new DynamoDBClient({ maxAttempts: 2, requestHandler: { connectionTimeout: timeoutMs, requestTimeout: timeoutMs } });
  const pk = (key: string) => ({ pk: S(prefix + key) });

  async function send<T>(what: string, key: string, run: () => Promise<T>): Promise<T> {
    try {
      return await within(timeoutMs, run(), 'DynamoDB');
    } catch (cause) {
      if (cause instanceof ConditionalCheckFailedException) throw cause;
      throw new Error(
        `${NAME} could not ${what} "${key}" (${reasonOf(cause)}). The receiver answers 503 so the service retries; ${fixFor(cause, table)}`,
        {
          cause,
        },
      );
    }
  }
  /** A conditional write: the attributes it returns when the condition held and it was written, false when it did not. */
  async function write(what: string, key: string, input: Omit<UpdateItemCommandInput, 'TableName' | 'Key'>): Promise<Item | false> {
    try {
      // Every write sets `ttl`, a word DynamoDB reserves: it is named through #ttl.
      const command = new UpdateItemCommand({ TableName: table, Key: pk(key), ExpressionAttributeNames: { '#ttl': 'ttl' }, ...input });
      const out = await send(what, key, () => client.send(command));
      return out.Attributes ?? {};
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
  const read = async (what: string, key: string): Promise<Item | undefined> =>
    (await send(what, key, () => client.send(new GetItemCommand({ TableName: table, Key: pk(key), ConsistentRead: true })))).Item;
  /** The values every write sets: the record's end, in ms for the store and in seconds for DynamoDB's TTL. */
  const until = (end: number) => ({ ':ex': N(end), ':ttl': N(Math.ceil(end / 1000)) });
  /** A write by the holder of the claim: it lands only while `token` holds a lease that is live at `t`. */
  const asHolder = (what: string, key: string, token: string, t: number, update: string, values: Item) =>
    write(what, key, {
      ConditionExpression: 'st = :claimed AND tk = :tk AND lu > :now',
      UpdateExpression: update,
      ExpressionAttributeValues: { ':claimed': S('claimed'), ':tk': S(token), ':now': N(t), ...values },
    });

  return {
    client,
    retentionMs,
    async claim(key, leaseMs): Promise<ClaimResult> {
      const lease = positiveMs(leaseMs, 'leaseMs', NAME);
      for (let tries = 0; tries < 3; tries++) {
        const t = now();
        const token = crypto.randomUUID();
        const claimed = {
          ':claimed': S('claimed'),
          ':tk': S(token),
          ':lu': N(t + lease),
          ':now': N(t),
          ':one': N(1),
          ...until(t + Math.max(retentionMs, lease)),
        };
        const set = 'SET st = :claimed, tk = :tk, lu = :lu, ex = :ex, #ttl = :ttl';
        // A key never seen, or past its retention: attempt 1.
        const fresh = await write('claim', key, {
          ConditionExpression: 'attribute_not_exists(pk) OR ex <= :now',
          UpdateExpression: `${set}, att = :one REMOVE oc, ca`,
          ExpressionAttributeValues: claimed,
        });
        if (fresh) return { status: 'claimed', token, attempt: 1 };
        const item = await read('claim', key);
        if (item && num(item.ex) > t) {
          if (item.st?.S === 'done') return { status: 'done', outcome: storedOutcome(item.oc?.S), completedAt: num(item.ca) };
          if (item.st?.S === 'claimed' && num(item.lu) > t) return { status: 'in-progress', leaseExpiresAt: num(item.lu) };
        }
        // Released, or a lease that lapsed: the next run is a redelivery, its attempt counted on.
        const again = await write('claim', key, {
          ConditionExpression: 'ex > :now AND (st = :released OR (st = :claimed AND lu <= :now))',
          UpdateExpression: `${set}, att = att + :one`,
          ExpressionAttributeValues: { ...claimed, ':released': S('released') },
          ReturnValues: 'UPDATED_NEW',
        });
        if (again) return { status: 'claimed', token, attempt: num(again.att) };
        // Changed between the read and the write (another instance claimed or completed it): look again.
      }
      throw new Error(
        `${NAME} could not claim "${key}": it changed under three attempts in a row. The receiver answers 503 so the service retries.`,
      );
    },
    async complete(key, token, opts = {}) {
      const ttl = positiveMs(opts.ttlMs ?? retentionMs, 'ttlMs', NAME);
      const t = now();
      const done = await asHolder('complete', key, token, t, 'SET st = :done, oc = :oc, ca = :now, ex = :ex, #ttl = :ttl REMOVE lu', {
        ':done': S('done'),
        ':oc': S(storedOutcome(opts.outcome)),
        ...until(t + ttl),
      });
      if (done) return true;
      // Idempotent for the token that completed it: a retried complete whose first answer was lost.
      const item = await read('complete', key);
      return item?.st?.S === 'done' && item.tk?.S === token && num(item.ex) > t;
    },
    async release(key, token) {
      const t = now();
      const released = await asHolder('release', key, token, t, 'SET st = :released, ex = :ex, #ttl = :ttl REMOVE tk, lu', {
        ':released': S('released'),
        ...until(t + retentionMs),
      });
      return released !== false;
    },
    async extend(key, token, leaseMs) {
      const lease = positiveMs(leaseMs, 'leaseMs', NAME);
      const t = now();
      // The record's end moves with the lease, so a lapsed claim keeps its attempt count.
      const extended = await asHolder('extend', key, token, t, 'SET lu = :lu, ex = :ex, #ttl = :ttl', {
        ':lu': N(t + lease),
        ...until(t + Math.max(retentionMs, lease)),
      });
      return extended !== false;
    },
    async get(key): Promise<StoreRecord | undefined> {
      const t = now();
      const item = await read('read', key);
      if (!item || !(num(item.ex) > t)) return undefined;
      const attempt = num(item.att);
      if (item.st?.S === 'done') return { state: 'done', attempt, outcome: storedOutcome(item.oc?.S), completedAt: num(item.ca) };
      if (item.st?.S === 'claimed' && num(item.lu) > t) return { state: 'claimed', attempt, leaseExpiresAt: num(item.lu) };
      return { state: 'released', attempt };
    },
    async close() {
      if (owned) client.destroy();
    },
  };
}

const reasonOf = (cause: unknown) => (cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)).slice(0, 300);

/** What to do about an error, by what DynamoDB said. */
function fixFor(cause: unknown, table: string): string {
  const name = cause instanceof Error ? cause.name : '';
  if (name === 'ResourceNotFoundException')
    return `create the table ${table} with partition key pk (String), and TTL on the attribute ttl (README), or pass the right name.`;
  if (/AccessDenied|UnrecognizedClient|InvalidSignature|ExpiredToken/.test(name)) {
    return `give the function's role dynamodb:GetItem and dynamodb:UpdateItem on ${table}, or check its credentials.`;
  }
  if (name === 'ValidationException') return `check that ${table}'s partition key is pk, of type String.`;
  return `check that DynamoDB is reachable from here (the client's region, AWS_REGION, and endpoint) and that ${table} exists.`;
}
