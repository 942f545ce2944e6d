import { randomBytes } from 'node:crypto';
import { CHECKS } from './all-checks.js';
import { Skip, type Check, type Ctx } from './contract.js';
import { listenForWebhooks, type Hooks } from './receiver.js';
import type { Diff } from './shapes.js';
import { createWire, KeyRefused, NotAllowed, statusAndMessage, WireError } from './wire.js';

/** The command could not do its work (service unreachable, refused…): exit code 1, or one of the command's own. */
export class RunError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export type Outcome = 'agree' | 'differs' | 'skipped';

/** One line of the report. */
export interface Row {
  name: string;
  outcome: Outcome;
  detail: string;
  diffs: Diff[];
}

export interface CheckOptions {
  /** The service's base URL, without `/v1`. */
  base: string;
  /** A sandbox key (`sk_test_…`). */
  key: string;
  webhookSecret?: string;
  /** A public URL that reaches `listen` (a tunnel): the callback URL for services that are not on this machine. */
  callback?: string;
  listen?: { host: string; port: number };
  timeoutMs: number;
  webhookTimeoutMs: number;
  rateLimit: boolean;
  /** Progress notes (waiting out a 429). */
  note: (line: string) => void;
  /** Masks the run's secrets in everything the service (or the callback's caller) sends, before a check reads it. */
  redact: (text: string) => string;
  /** Called as each row is decided. */
  onRow?: (row: Row) => void;
  /** The checks to run; default the whole contract. */
  checks?: Check[];
}

const isLoopback = (base: string) => {
  const host = new URL(base).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
};

async function hooksFor(options: CheckOptions): Promise<Hooks | { skip: string }> {
  try {
    if (options.callback !== undefined)
      return await listenForWebhooks(options.listen?.host ?? '127.0.0.1', options.listen?.port ?? 0, options.redact, options.callback);
    if (isLoopback(options.base)) return await listenForWebhooks('127.0.0.1', 0, options.redact);
  } catch (error) {
    throw new RunError(`cannot listen for webhooks: ${(error as Error).message}`);
  }
  return { skip: `no reachable callback: ${new URL(options.base).host} is not a loopback address` };
}

/**
 * Run the contract against the service: one row per check, in order. A refused key (KeyRefused)
 * stops the run and is thrown: no row would say anything about the service.
 */
export async function runContract(options: CheckOptions): Promise<Row[]> {
  const hooks = await hooksFor(options);
  const ctx: Ctx = {
    wire: createWire({ base: options.base, key: options.key, timeoutMs: options.timeoutMs, note: options.note, redact: options.redact }),
    runId: randomBytes(4).toString('hex'),
    hooks,
    webhookSecret: options.webhookSecret,
    webhookTimeoutMs: options.webhookTimeoutMs,
    rateLimit: options.rateLimit,
    memo: new Map(),
  };
  const rows: Row[] = [];
  try {
    for (const check of options.checks ?? CHECKS) {
      let row: Row;
      try {
        const verdict = await check.run(ctx);
        row =
          'skip' in verdict
            ? { name: check.name, outcome: 'skipped', detail: verdict.skip, diffs: [] }
            : { name: check.name, outcome: verdict.diffs.length ? 'differs' : 'agree', detail: verdict.detail, diffs: verdict.diffs };
      } catch (error) {
        if (error instanceof KeyRefused) throw error;
        if (error instanceof Skip) row = { name: check.name, outcome: 'skipped', detail: error.message, diffs: [] };
        else if (error instanceof NotAllowed) {
          const { answer } = error;
          const detail = `the key may not send ${answer.request} (${statusAndMessage(answer)}): give it the permission, or check with a key that holds it`;
          row = { name: check.name, outcome: 'skipped', detail, diffs: [] };
        } else if (error instanceof WireError) {
          // Nothing answered at all: the address is wrong or the service is down, not a drift.
          if (ctx.wire.answers.length === 0) throw new RunError(`cannot reach the service at ${options.base}: ${error.message}`);
          row = {
            name: check.name,
            outcome: 'differs',
            detail: error.message,
            diffs: [{ at: 'request', expected: 'an answer', got: error.message }],
          };
        } else {
          // A bug in the check or an answer it could not read: reported, and the other checks still run.
          const message = error instanceof Error ? error.message : String(error);
          row = {
            name: check.name,
            outcome: 'differs',
            detail: `the check itself failed: ${message}`,
            diffs: [{ at: 'check', expected: 'to run', got: message }],
          };
        }
      }
      rows.push(row);
      options.onRow?.(row);
    }
  } finally {
    if ('close' in hooks) await hooks.close();
  }
  return rows;
}
