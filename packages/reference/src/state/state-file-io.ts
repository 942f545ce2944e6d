// Reading and writing the `serve --state` file safely: it holds the webhook secret, and it may be
// a file someone else planted or edited.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { dirname } from 'node:path';

/** A state file that cannot be used; the message says what to do. The file is left as it is. */
export class StateFileError extends Error {}

/** The largest state file read: far beyond what a session writes (each change rewrites the whole file). */
export const MAX_STATE_BYTES = 256 * 1024 * 1024;
/** The deepest nesting of arrays and objects read; a state file written by the service nests 6 levels. */
export const MAX_STATE_DEPTH = 32;

export const advice = 'fix it, or move it away to start afresh (the service never overwrites a state file it cannot read)';

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code;

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch (error) {
    if (errno(error) === 'ENOENT') return null;
    throw error;
  }
}

/** Only a regular file is read or replaced: never a link (whose target could be anywhere), a directory or a FIFO. */
function refuseOtherKinds(file: string, stats: Stats): void {
  if (stats.isSymbolicLink()) {
    let target = '';
    try {
      target = ` to ${readlinkSync(file)}`;
    } catch {
      // Named without its target.
    }
    throw new StateFileError(
      `the state file ${file} is a symbolic link${target}: the service never reads or writes its state (which holds the webhook secret) through a link. Pass the file itself with --state, or remove the link.`,
    );
  }
  if (!stats.isFile())
    throw new StateFileError(
      `the state file ${file} is not a regular file: pass a file's path with --state, such as --state .payhook-state.json.`,
    );
}

const cannotRead = (file: string, error: unknown) =>
  new StateFileError(`cannot read the state file ${file} (${(error as Error).message}): check its permissions, or pass another --state.`);

/**
 * The text of a state file, or null when there is none. Refuses a link, anything but a regular
 * file, and a file larger than MAX_STATE_BYTES, before reading a byte of it.
 */
export function readStateText(file: string): string | null {
  let stats: Stats | null;
  try {
    stats = lstatOrNull(file);
  } catch (error) {
    throw cannotRead(file, error);
  }
  if (!stats) return null;
  refuseOtherKinds(file, stats);
  let fd: number;
  try {
    // O_NOFOLLOW: a link swapped in since the check is refused (ELOOP), not followed; O_NONBLOCK: a FIFO never blocks the open.
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (errno(error) === 'ELOOP') {
      try {
        refuseOtherKinds(file, lstatSync(file));
      } catch (refused) {
        if (refused instanceof StateFileError) throw refused;
      }
    }
    throw cannotRead(file, error);
  }
  try {
    const opened = fstatSync(fd);
    refuseOtherKinds(file, opened);
    const tooLarge = () =>
      new StateFileError(
        `the state file ${file} is larger than ${MAX_STATE_BYTES / 1024 / 1024} MiB, more than the service ever writes: ${advice}.`,
      );
    if (opened.size > MAX_STATE_BYTES) throw tooLarge();
    // Read at most one byte more than the cap, so a file growing meanwhile is refused too.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, MAX_STATE_BYTES + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > MAX_STATE_BYTES) throw tooLarge();
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } catch (error) {
    if (error instanceof StateFileError) throw error;
    throw cannotRead(file, error);
  } finally {
    closeSync(fd);
  }
}

/**
 * How deep arrays and objects nest in `text`, read as JSON (brackets inside strings do not
 * count), up to `limit + 1`: a cheap bound before `JSON.parse`, whose result a deep file would
 * make every recursive reader of it (zod, `JSON.stringify`) overflow the stack.
 */
export function nestingDepth(text: string, limit = MAX_STATE_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 93 || c === 125) depth--;
  }
  return deepest;
}

/**
 * Write the file atomically and privately. The text goes to a new temporary file beside it, with
 * an unpredictable name, created exclusively (O_CREAT|O_EXCL: an existing file or link at that
 * name is an error, never written through) with mode 0600, synced, then renamed over the file. A
 * link (or anything but a regular file) at the file's own path is refused, not replaced. The
 * temporary file is removed when anything fails.
 */
export function writeStateFile(file: string, text: string): void {
  const existing = lstatOrNull(file);
  if (existing) refuseOtherKinds(file, existing);
  const temp = `${file}.${randomBytes(12).toString('hex')}.tmp`;
  let fd: number | undefined;
  let created = false;
  try {
    fd = openSync(temp, 'wx', 0o600);
    created = true;
    fchmodSync(fd, 0o600); // whatever the umask
    writeFileSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, file);
  } catch (error) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // Already failing: the first error is the one to report.
      }
    }
    // Only a file this call created is removed: whatever else is at that name is left alone.
    if (created) rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dirname(file));
}

/** Make the rename itself durable, where the platform allows opening a directory (not Windows). */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Best effort: the file is whole either way.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
