import type { Log, LogFields } from '../base/logger.js';

/**
 * Where a store's own lines go (a lost connection, a server that keeps nothing on disk, a purge
 * that failed): the console until a receiver or worker built on the store hands it its logger
 * through `Store.useLogger`, then that logger, at its levels. The first logger handed over keeps
 * them, so several receivers on one store log each line once.
 *
 * @example
 * const log = storeLog();
 * const store = { ...ops, useLogger: log.use };
 * log.warn('[@payhook/store-x] the server keeps nothing on disk: …');
 */
export interface StoreLog {
  /** Write a warning: to the console, or at warn through the logger handed over. */
  warn(message: string, fields?: LogFields): void;
  /** Write an error: to the console, or at error through the logger handed over. */
  error(message: string, fields?: LogFields): void;
  /** From now on, write through `log`; a second call changes nothing. */
  use(log: Log): void;
}

/** A store's log, writing to the console until a receiver hands it its logger. */
export function storeLog(): StoreLog {
  let to: Log | undefined;
  const write = (level: 'warn' | 'error', message: string, fields: LogFields = {}) => {
    if (!to) return void console[level](message);
    try {
      if (to.enabled(level)) to.write(level, fields, message);
    } catch {
      // A logger that throws changes nothing a store does.
    }
  };
  return {
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
    use(log) {
      to ??= log;
    },
  };
}
