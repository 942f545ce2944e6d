import type { Receiver } from '@payhook/core';
import { adapterOf } from '@payhook/core/adapter';
import { boardHost, type BoardHost } from './guard.js';

/** Who is looking at the board, as `authorize` says: named in every audit line. */
export interface BoardViewer {
  /** The name the audit lines give for what this viewer does. */
  user: string;
  /** This viewer may look but not act (replay, retry, erase), whatever the board's own `readOnly`. */
  readOnly?: boolean;
  /**
   * The one merchant account this viewer sees and acts on (a receiver with `accounts`): its name
   * as `accounts.resolve` knows it. Left out (or `undefined`): every account's records, the
   * platform's own staff (or a single-account app). Anything else is refused with a 500.
   */
  account?: string;
}

/** What `authorize` may answer: a viewer, a Response of the app's own (a redirect to its login), or no (401). */
export type Authorization = BoardViewer | Response | false | null | undefined;

/** What `createBoard` takes: the receiver, who may look (`authorize`), and where the board is mounted. */
export interface BoardOptions {
  /** The receiver whose store keeps the ledger (`ledger: true`): its records are shown, and its `replay` runs the actions. */
  receiver: Receiver;
  /**
   * Asked for every request the board gets, before anything is read: answer the viewer, or a
   * Response (the app's login redirect), or false (401). Required: the board will not mount
   * without it, since it shows what customers paid and can run handlers again.
   *
   * @example
   * authorize: async (request) => {
   *   const user = await sessionUser(request);
   *   return user?.isAdmin ? { user: user.email } : false;
   * }
   * @example
   * // A platform: a merchant's staff see their own account; the platform's staff see every account.
   * authorize: async (request) => {
   *   const user = await sessionUser(request);
   *   if (user?.platformStaff) return { user: user.email };
   *   return user?.account ? { user: user.email, account: user.account } : false;
   * }
   */
  authorize: (request: Request) => Authorization | Promise<Authorization>;
  /** The path the board is mounted at, as the browser sees it: `/admin/payments`. Its links and cookie live under it. */
  basePath: string;
  /** No actions at all: the pages show no buttons, and every action answers 403. */
  readOnly?: boolean;
  /** Records per page of the list, 1 to 200. Default 50. */
  pageSize?: number;
  /** The list's live updates: how often an open page's stream asks the ledger for new records (default 1,000 ms), and how many streams may be open at once (default 20). */
  live?: { intervalMs?: number; maxOpen?: number };
  /**
   * The names the board answers under, as the browser's `Host` says them: `pay.example.com` (any
   * port) or `pay.example.com:8443` (that port). Loopback names (`localhost`, `127.0.0.1`,
   * `[::1]`) and IP addresses are answered always: no DNS answer can give them to another site.
   * Any other name gets 421 before `authorize` is asked, and a warning in the log.
   *
   * Left out, the board answers every name, as before, but one: a request that came on a loopback
   * connection (the app on localhost) under another name is a hostile page whose name was pointed
   * at this machine (DNS rebinding), and gets 421, whatever `X-Forwarded-*` headers it carries (the
   * page may send those). A proxy on this machine that passes the browser's Host on names it here.
   * nodeBoard and fastifyBoard see the connection; under `board.fetch`
   * (Hono, Next, Bun, Deno) the board cannot, so a development board there whose `authorize` asks
   * no credential should say `hosts: []` (loopback names only).
   *
   * @example
   * hosts: ['pay.example.com'], // and localhost, for a developer on the machine
   */
  hosts?: readonly string[];
  /**
   * Gets a record of every action done on the board, every post it refused, and every action that
   * failed: who, which account, what, to what, and what came of it, for an audit table of the
   * app's own. It is awaited before the answer; one that throws is logged. With it, an action done
   * is logged at info; without it, at warn, so that the default logger (warnings and errors only)
   * still shows who did what.
   *
   * @example
   * audit: (record) => db.insert('board_audit', record),
   */
  audit?: AuditHook;
}

export interface BoardSettings extends Required<Omit<BoardOptions, 'readOnly' | 'live' | 'hosts' | 'audit'>> {
  readOnly: boolean;
  /** `hosts` read, or undefined for none given (guard.ts's `misdirected` says what each means). */
  hosts: readonly BoardHost[] | undefined;
  audit: AuditHook | undefined;
  /** Whether the receiver serves many accounts (`accounts`): its records name theirs. */
  accounts: boolean;
  live: { intervalMs: number; maxOpen: number };
}

const NAME = '[@payhook/board]';

/** The options with defaults filled in and checked. */
export function boardSettings(options: BoardOptions): BoardSettings {
  if (typeof options?.authorize !== 'function') {
    throw new TypeError(
      `${NAME} createBoard needs an authorize(request) function: the board shows customers' payments and can run handlers again, so it never mounts open. Answer { user } for who may look, false for everyone else.`,
    );
  }
  const receiver = options.receiver;
  if (typeof receiver?.replay !== 'function' || receiver.store === undefined) {
    throw new TypeError(`${NAME} createBoard needs the receiver createReceiver() made, as \`receiver\`.`);
  }
  if (!receiver.store.ledger) {
    throw new TypeError(
      `${NAME} the receiver's store keeps no ledger, so the board has nothing to show: create it with a \`ledger\` option, e.g. postgresStore({ connectionString, ledger: true }).`,
    );
  }
  const basePath = typeof options.basePath === 'string' ? options.basePath.replace(/\/+$/, '') : undefined;
  if (basePath === undefined || (basePath !== '' && !/^\/[\w\-./~]*$/.test(basePath)) || basePath.includes('//')) {
    throw new TypeError(
      `${NAME} basePath must be the path the board is mounted at, starting with /, such as '/admin/payments'; got ${JSON.stringify(options.basePath)}.`,
    );
  }
  const pageSize = options.pageSize ?? 50;
  if (!(Number.isInteger(pageSize) && pageSize >= 1 && pageSize <= 200)) {
    throw new RangeError(`${NAME} pageSize must be a whole number from 1 to 200; got ${pageSize}. Leave it unset for 50.`);
  }
  const intervalMs = options.live?.intervalMs ?? 1000;
  const maxOpen = options.live?.maxOpen ?? 20;
  if (!(Number.isFinite(intervalMs) && intervalMs >= 10) || !(Number.isInteger(maxOpen) && maxOpen >= 0)) {
    throw new RangeError(
      `${NAME} live.intervalMs must be at least 10 ms and live.maxOpen a whole number (0 turns live updates off); got ${JSON.stringify(options.live)}. Leave them unset for 1,000 ms and 20.`,
    );
  }
  const hosts = options.hosts === undefined ? undefined : hostsOf(options.hosts);
  if (options.audit !== undefined && typeof options.audit !== 'function') {
    throw new TypeError(`${NAME} audit must be a function (record) => void that keeps each action's record; got ${typeof options.audit}.`);
  }
  const accounts = adapterOf(receiver).accountOf !== undefined;
  return {
    receiver,
    authorize: options.authorize,
    basePath,
    readOnly: options.readOnly === true,
    accounts,
    pageSize,
    live: { intervalMs, maxOpen },
    hosts,
    audit: options.audit,
  };
}

function hostsOf(given: unknown): BoardHost[] {
  const names = Array.isArray(given) ? given.map(boardHost) : [undefined];
  const bad = names.findIndex((h) => h === undefined);
  if (bad >= 0) {
    const what = Array.isArray(given) ? JSON.stringify(given[bad]) : JSON.stringify(given);
    throw new TypeError(
      `${NAME} hosts must be a list of the names the board is served under, such as ['pay.example.com'] or ['pay.example.com:8443'] (no scheme, no path); got ${what}.`,
    );
  }
  return names as BoardHost[];
}

/** The board's actions, as audit records name them. */
export type BoardAction = 'replay' | 'force' | 'retry' | 'retry-all' | 'erase' | 'erase-customer';

/**
 * What one post to an action did, or why it was refused: what `audit` gets, in plain values ready
 * for a table of the app's own.
 */
export interface BoardAuditRecord {
  /** When, in epoch milliseconds. */
  at: number;
  /** Who: the `user` that `authorize` answered. */
  user: string;
  /** The account `authorize` held the viewer to; undefined for the platform's own staff and a single-account app. */
  account: string | undefined;
  /** What was done: a replay, a forced replay, a dead letter's retry (one or all), or an erasure. */
  action: BoardAction;
  /**
   * What it was done to: a delivery's id (replay, force, retry), a payment's reference (erase), how
   * a customer was matched (erase-customer: `email` or `phone`, never the address itself), every
   * open dead letter (retry-all); and `scope`, the account the action was held to, where it was.
   */
  target: { id?: string; reference?: string; customer?: 'email' | 'phone'; deadLetters?: 'open'; scope?: string };
  /**
   * `done`, with what came of it (a replay's outcome and its new record, the records erased, the
   * dead letters retried and closed); `refused`, with why (a post without the page's token or from
   * another site, a delivery this viewer cannot see); or `failed`, with the error's message.
   */
  result:
    | { kind: 'done'; outcome?: string; replay?: string; erased?: number; retried?: readonly string[]; closed?: number }
    | { kind: 'refused'; why: string }
    | { kind: 'failed'; error: string };
  /** The line the receiver's logger got, without the package's prefix: `ada@shop.example: replay of 0mf…: processed (200)`. */
  message: string;
}

/** Where the board's audit records go: `audit`, if given, and the receiver's logger always. */
export type AuditHook = (record: BoardAuditRecord) => void | Promise<void>;

/**
 * Write one action to the audit trail: the receiver's logger always, and `audit` when given. A
 * refusal or a failure is a warning. An action done is an info line when `audit` keeps the trail,
 * and a warning when it does not, so that the default logger (warnings and errors only) still says
 * who did what. The hook is awaited; one that throws is logged and changes no answer.
 */
export async function writeAudit(
  receiver: Receiver,
  hook: AuditHook | undefined,
  record: Omit<BoardAuditRecord, 'at'>,
  board: object,
  err?: unknown,
): Promise<void> {
  const { log } = adapterOf(receiver);
  const level = hook !== undefined && record.result.kind === 'done' ? 'info' : 'warn';
  const who = { user: record.user, account: record.account, action: record.action };
  log(
    level,
    err === undefined ? { board: { ...who, ...board } } : { board: { ...who, ...board }, err },
    `[@payhook/board] ${record.message}`,
  );
  if (hook === undefined) return;
  try {
    await hook({ at: Date.now(), ...record });
  } catch (error) {
    log(
      'error',
      { err: error },
      `[@payhook/board] the audit hook failed on "${record.message}": ${String(error)}. The action itself is done; fix the hook.`,
    );
  }
}
