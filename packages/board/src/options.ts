import type { Receiver } from '@payhook/core';
import { adapterOf } from '@payhook/core/adapter';

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
}

export interface BoardSettings extends Required<Omit<BoardOptions, 'readOnly' | 'live'>> {
  readOnly: boolean;
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
  const accounts = adapterOf(receiver).accountOf !== undefined;
  return {
    receiver,
    authorize: options.authorize,
    basePath,
    readOnly: options.readOnly === true,
    accounts,
    pageSize,
    live: { intervalMs, maxOpen },
  };
}
