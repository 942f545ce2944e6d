import { TRANSACTION_STATUSES } from '@payhook/core/lifecycle';
import { z } from 'zod';
import type { Delivery } from '../delivery/delivery-record.js';
import type { MerchantConfig } from '../domain/merchants.js';
import type { ReferenceState } from '../contract/service-types.js';
import { advice, MAX_STATE_DEPTH, nestingDepth, readStateText, StateFileError, writeStateFile } from './state-file-io.js';
import type { Transaction } from '../domain/transactions.js';

export { MAX_STATE_BYTES, MAX_STATE_DEPTH, StateFileError, writeStateFile } from './state-file-io.js';

/** What `serve --state <file>` keeps: merchants (keys as sha256 digests), transactions, deliveries, the clock's lead. */
export interface StateFile extends ReferenceState {
  merchants: MerchantConfig[];
  /** How far the service clock ran ahead of the wall clock (sandbox clock advances). */
  clockOffsetMs: number;
  /** The header deliveries are signed in, as given (`X-Epay-Signature`); absent in files saved before it was kept. */
  signatureHeader?: string;
}

const FORMAT = 'payhook-reference-state';
const VERSION = 1;

const savedKey = z.looseObject({
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'an API key is kept as "sha256" (64 lower-case hex digits)'),
  mode: z.enum(['sandbox', 'live']),
});

const YEAR = 366 * 24 * 60 * 60 * 1000;
/** A time the service could have recorded: milliseconds since 1970, within what `Date` can print. */
const instant = z.number().min(0).max(8.64e15, 'a time must be at most 8.64e15 ms (what a Date can hold)');

const headerName = z
  .string()
  .max(100)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, '"signatureHeader" must be an HTTP header name such as "X-Epay-Signature"');

const schema = z.object({
  format: z.literal(FORMAT, { error: `"format" must be "${FORMAT}"` }),
  version: z.literal(VERSION, { error: `"version" must be ${VERSION}` }),
  clockOffsetMs: z
    .number()
    .min(0)
    .max(100 * YEAR, 'the clock offset must be at most 100 years')
    .default(0),
  // Kept since the header was made part of the state: an older file without it still loads (version 1 either way).
  signatureHeader: headerName.optional(),
  merchants: z
    .array(z.looseObject({ id: z.string().min(1), apiKeys: z.array(savedKey), webhookSecret: z.string().min(1) }))
    .min(1, 'the file holds no merchant'),
  transactions: z.array(
    z.looseObject({
      seq: z.number().int().positive(),
      reference: z.string().min(1),
      merchantId: z.string(),
      mode: z.enum(['sandbox', 'live']),
      status: z.enum(TRANSACTION_STATUSES),
      createdAt: instant,
      updatedAt: instant.optional(),
      expiresAt: instant.optional(),
      paidAt: instant.nullable().optional(),
      timeline: z.array(z.unknown()),
    }),
  ),
  deliveries: z.array(
    z.looseObject({
      id: z.string().regex(/^dlv_\d+$/),
      reference: z.string(),
      state: z.enum(['pending', 'retrying', 'delivered', 'failed', 'dropped', 'held']),
      attempts: z.array(z.looseObject({ number: z.number() })),
      nextAttemptAt: z.string().nullable(),
      body: z.string(),
      signature: z.string(),
      signatureHeader: headerName.optional(),
    }),
  ),
});

/**
 * Read a state file: null when it does not exist yet, else its content. Throws `StateFileError`
 * for a file that cannot be read, is a link or not a regular file, is larger than
 * MAX_STATE_BYTES, nests deeper than MAX_STATE_DEPTH, is not JSON or is not a state file.
 *
 * @example
 * const saved = readStateFile('.payhook/state.json');
 */
export function readStateFile(file: string): StateFile | null {
  const text = readStateText(file);
  if (text === null) return null;
  if (nestingDepth(text) > MAX_STATE_DEPTH) {
    throw new StateFileError(
      `the state file ${file} nests arrays or objects deeper than ${MAX_STATE_DEPTH} levels, far more than a state file does: ${advice}.`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateFileError(`the state file ${file} is not valid JSON (${(error as Error).message}): ${advice}.`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new StateFileError(`the state file ${file} is not a payhook-reference state file${where} (${issue.message}): ${advice}.`);
  }
  const data = parsed.data;
  return {
    merchants: data.merchants as unknown as MerchantConfig[],
    clockOffsetMs: data.clockOffsetMs,
    transactions: data.transactions as unknown as Transaction[],
    deliveries: data.deliveries as unknown as Delivery[],
    ...(data.signatureHeader === undefined ? {} : { signatureHeader: data.signatureHeader }),
  };
}

/** The file's text for this state. */
export function stateText(state: StateFile): string {
  return `${JSON.stringify({ format: FORMAT, version: VERSION, ...state }, null, 1)}\n`;
}

export interface StateSaver {
  /** Save soon (debounced): many changes in a burst make one write. A failed write is reported through `onError`. */
  schedule(): void;
  /** Save now, if anything changed since the last write; returns why the write failed, else null. */
  flush(): string | null;
}

/**
 * Keep a state file up to date: `schedule` after each change, `flush` at start and before exiting.
 * A scheduled write that fails is reported once per distinct failure, and tried again on the next
 * change.
 *
 * @example
 * const saver = createStateSaver(file, () => ({ ...service.snapshot(), merchants, clockOffsetMs: 0 }), console.error);
 */
export function createStateSaver(file: string, read: () => StateFile, onError: (message: string) => void, delayMs = 50): StateSaver {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let written = '';
  let lastError: string | null = null;
  const flush = (): string | null => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const text = stateText(read());
    if (text === written) return null;
    try {
      writeStateFile(file, text);
      written = text;
      return null;
    } catch (error) {
      if (error instanceof StateFileError) return `${error.message} Changes are kept in memory meanwhile.`;
      return `cannot write the state file ${file} (${(error as Error).message}): check the directory exists and is writable; changes are kept in memory meanwhile.`;
    }
  };
  return {
    schedule() {
      timer ??= setTimeout(() => {
        const problem = flush();
        if (problem !== null && problem !== lastError) onError(problem);
        lastError = problem;
      }, delayMs);
    },
    flush,
  };
}
