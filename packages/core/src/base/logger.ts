/** The levels payhook logs at. A healthy service logs nothing above `info`. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * What a log line carries besides its message, as payhook builds it: any object here, typed for
 * loggers as `LogFields` in contracts/log-fields.ts (a delivery report, errors under `err`…).
 */
export type LogFields = object;

/** A function logger, whatever type it gives the fields: `never` takes them all. */
type AnyLogFunction = (level: LogLevel, fields: never, message: string) => void;

/**
 * Any object with level methods, taken as it is: pino and its child loggers, bunyan, winston,
 * `console`, or your own. Methods are called on the object (never copied off it). pino, bunyan and
 * your own get `(fields, message)`; winston and `console`, whose methods read a message first, get
 * `(message, fields)`. A level whose method is missing is not logged; `isLevelEnabled`, where the
 * logger has it (pino, winston), is asked before a line is built.
 */
export interface LoggerObject {
  // The arguments' order depends on the kind of logger (see above), so they are not typed here.
  /** Gets debug lines: copies of done events, unknown event names. */
  debug?: (...args: any[]) => unknown;
  /** Gets info lines: every processed, queued and accepted delivery. */
  info?: (...args: any[]) => unknown;
  /** Gets warn lines: refusals (a bad signature, a held event). */
  warn?: (...args: any[]) => unknown;
  /** Gets error lines: what needs fixing or loses work. */
  error?: (...args: any[]) => unknown;
  /** Whether a level is logged, asked before a line is built. */
  isLevelEnabled?: (level: string) => boolean;
}

/** The one way the receiver logs. Never throws: a logger that throws changes no answer. */
export interface Log {
  /** Whether lines of `level` are logged: nothing is built for one that is not. */
  enabled(level: LogLevel): boolean;
  /** Writes one line; never throws. */
  write(level: LogLevel, fields: LogFields, message: string): void;
}

type Method = (this: LoggerObject, ...args: unknown[]) => unknown;

const has = (logger: object, name: string) => typeof (logger as Record<string, unknown>)[name] === 'function';
/**
 * Loggers whose methods read a message first: winston's (and their children, which inherit
 * `configure` and `add`), and consoles (the global one, or a `new Console(stream)`).
 */
const readsMessageFirst = (logger: object) =>
  logger === console || (has(logger, 'configure') && has(logger, 'add')) || (has(logger, 'table') && has(logger, 'dir'));

/** With no logger: warnings and errors to the console, nothing below. */
const DEFAULT: LoggerObject = {
  warn: (message: string, fields: LogFields) => console.warn(message, fields),
  error: (message: string, fields: LogFields) => console.error(message, fields),
};

/**
 * The logger as given, behind one contract.
 *
 * @example
 * createReceiver({ secret, logger: pino() });           // (fields, message), errors under err
 * createReceiver({ secret, logger: winston.createLogger({ transports: [...] }) });
 * createReceiver({ secret, logger: (level, fields, message) => myLog(level, message, fields) });
 */
export function toLog(logger: LoggerObject | AnyLogFunction | undefined): Log {
  if (typeof logger === 'function') {
    return {
      enabled: () => true,
      write(level, fields, message) {
        try {
          logger(level, fields as never, message);
        } catch {}
      },
    };
  }
  if (logger !== undefined && (typeof logger !== 'object' || logger === null)) {
    throw new TypeError(
      `[@payhook/core] logger must be an object with level methods (pino, winston, console…) or a function (level, fields, message); got ${logger === null ? 'null' : typeof logger}.`,
    );
  }
  const target: LoggerObject = logger ?? DEFAULT;
  const messageFirst = logger === undefined || readsMessageFirst(target);
  return {
    enabled(level) {
      if (typeof target[level] !== 'function') return false;
      if (typeof target.isLevelEnabled !== 'function') return true;
      try {
        return target.isLevelEnabled(level) !== false;
      } catch {
        return true;
      }
    },
    write(level, fields, message) {
      const method = target[level] as Method | undefined;
      if (typeof method !== 'function') return;
      try {
        if (messageFirst) method.call(target, message, fields);
        else method.call(target, fields, message);
      } catch {}
    },
  };
}
