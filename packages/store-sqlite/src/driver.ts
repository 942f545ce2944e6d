export const NAME = '[@payhook/store-sqlite]';

/** What the store asks of a statement: the part `node:sqlite` and better-sqlite3 share. */
export interface Statement {
  /** Runs it with these parameters; how many rows it changed. */
  run(...params: unknown[]): { changes: number | bigint };
  /** The first row it returns with these parameters, or undefined. */
  get(...params: unknown[]): unknown;
  /** Every row it returns with these parameters. */
  all(...params: unknown[]): unknown[];
}

/** What the store asks of a database connection. */
export interface Connection {
  /** Runs SQL that takes no parameters (pragmas, schema, BEGIN and COMMIT). */
  exec(sql: string): unknown;
  /** A statement compiled once, to run many times. */
  prepare(sql: string): Statement;
  /** Closes the database. */
  close(): unknown;
}

/**
 * A driver: a class whose `new Driver(path)` opens a database file. `node:sqlite`'s `DatabaseSync`
 * and better-sqlite3's `Database` both are.
 */
export type SqliteDriver = new (path: string) => Connection;

/**
 * `driver`, or `node:sqlite`'s DatabaseSync where this runtime has it (Node 22.13 and later, and
 * 22.5 with --experimental-sqlite); otherwise the error that says to install better-sqlite3.
 */
export function driverOf(driver: unknown): SqliteDriver {
  if (driver !== undefined) {
    if (typeof driver === 'function') return driver as SqliteDriver;
    throw new TypeError(
      `${NAME} driver must be better-sqlite3's Database class (import Database from 'better-sqlite3') or node:sqlite's DatabaseSync; got ${typeof driver}.`,
    );
  }
  const builtin = builtinSqlite();
  if (builtin) return builtin;
  throw new TypeError(
    `${NAME} this runtime has no node:sqlite (Node ${typeof process === 'object' ? process.version : '?'}; it came without a flag in Node 22.13). ` +
      "Install better-sqlite3 12 and pass it: import Database from 'better-sqlite3'; sqliteStore({ path, driver: Database }).",
  );
}

function builtinSqlite(): SqliteDriver | undefined {
  try {
    // getBuiltinModule: Node 20.16 and 22.3 on; it never touches the file system or a bundler.
    const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    return (get?.('node:sqlite') as { DatabaseSync?: SqliteDriver } | undefined)?.DatabaseSync;
  } catch {
    // Node 22.5 to 22.12 without --experimental-sqlite: no such module.
    return undefined;
  }
}

/**
 * Opens `path` for the store: WAL, so readers never wait for the writer and several processes
 * share the file; synchronous=FULL, so a commit is on disk before the store answers (a claim before
 * its handler runs, a done record before the 200), across a crash of the process or the machine;
 * busy_timeout, so a writer waits that long for another process's write instead of failing at once.
 */
export function openDatabase(Driver: SqliteDriver, path: string, busyTimeoutMs: number): Connection {
  let db: Connection;
  try {
    db = new Driver(path);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `${NAME} could not open ${JSON.stringify(path)} (${reason}). Check that its directory exists and that this process may write there (the store also writes ${path}-wal and ${path}-shm beside it).`,
      { cause },
    );
  }
  db.exec(`PRAGMA busy_timeout = ${Math.ceil(busyTimeoutMs)}`);
  // Switching a file to WAL needs it to itself for a moment, and SQLite answers "database is locked"
  // at once, without waiting busy_timeout, when several processes open a new file together (seen
  // with 4 receivers starting at once): try again for up to busyTimeoutMs.
  untilFree(() => db.exec('PRAGMA journal_mode = WAL'), busyTimeoutMs);
  db.exec('PRAGMA synchronous = FULL');
  return db;
}

/** `fn`, run again after a short pause while SQLite says the file is locked, for at most `ms`. */
function untilFree(fn: () => unknown, ms: number): void {
  const end = Date.now() + ms;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      fn();
      return;
    } catch (error) {
      const busy = /SQLITE_BUSY|database is locked/i.test(`${(error as { code?: unknown }).code} ${(error as Error).message}`);
      if (!busy || Date.now() >= end) throw error;
      // A synchronous pause: the store opens synchronously, once, when it is made.
      Atomics.wait(pause, 0, 0, wait);
    }
  }
}

/**
 * Runs `fn` in a write transaction: BEGIN IMMEDIATE takes the file's write lock first, so two
 * processes never both read a key free and both claim it.
 */
export function inTransaction<T>(db: Connection, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    try {
      db.exec('ROLLBACK');
    } catch {
      // The transaction may already be gone (SQLite rolls back on some errors by itself).
    }
    throw error;
  }
}
