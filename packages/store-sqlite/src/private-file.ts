import { closeSync, constants, openSync } from 'node:fs';

// Its own module, not driver.ts: `@payhook/store-sqlite/sql` (a Durable Object's store) loads
// driver.ts, and a Worker has no node:fs.

/**
 * Makes the database file, if there is none, readable and writable by its owner only (0600): it
 * holds customers' emails and phone numbers, and SQLite, left to make it, makes it 0644 under the
 * usual umask. SQLite gives the -wal and -shm files the database's mode. An empty file is a new
 * database to SQLite. A file that exists keeps the mode its owner gave it (0640 for a group of
 * receiving users, say); a `file:` URI is left to the driver.
 */
export function createPrivate(path: string): void {
  if (path.startsWith('file:')) return;
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch {
    // There already (another process may have just made it), or a directory that is not there,
    // which the driver's open then reports.
    return;
  }
  closeSync(fd);
}
