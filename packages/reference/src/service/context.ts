import type { Clock } from './clock.js';
import type { CursorCodec } from './cursor.js';
import type { Dispatcher } from './dispatcher.js';
import type { Faults } from './faults.js';
import type { IdempotencyStore } from './idempotency.js';
import type { MerchantRegistry } from './merchants.js';
import type { PageHost } from './pages/page-guard.js';
import type { RateLimiter } from './rate-limit.js';
import type { TransactionStore, Transaction } from './transactions.js';
import type { Action, TransitionDetails } from './transitions.js';

/** Everything a route handler can reach: one service's state and settings. */
export interface ServiceContext {
  clock: Clock;
  merchants: MerchantRegistry;
  transactions: TransactionStore;
  dispatcher: Dispatcher;
  faults: Faults;
  idempotency: IdempotencyStore;
  cursors: CursorCodec;
  limiter: RateLimiter;
  allowHttpCallbacks: boolean;
  /** Origin used in checkout URLs; default: the origin the request came to. */
  publicUrl: string | undefined;
  /** Host names the pages answer to besides the loopback names and the listen address: `pageHosts` and the host of `publicUrl`. */
  pageHosts: readonly PageHost[];
  /** Move a transaction and send the event the move emits; `details` (error code and message too) go on the timeline. */
  move(tx: Transaction, action: Action, details?: TransitionDetails): { ok: true } | { ok: false; message: string };
}
