import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ReferenceServiceOptions } from '@payhook/reference';
import { afterEach } from 'vitest';
import { root } from '../cli/cli-helpers.js';
import { start, type Started } from '@payhook/test-support/apps/reference-service';

/*
 * What the `payhook-reference check` suites share: the real CLI (its source, through tsx, so no
 * build is needed), the table read back from its output, and the servers it is run against.
 */

const tsx = join(root, 'node_modules/.bin/tsx');
const cli = join(root, 'packages/reference/src/cli.ts');

export interface CheckRun {
  code: number | null;
  /** stdout then stderr. */
  output: string;
  stdout: string;
  stderr: string;
}

/** Run `payhook-reference <args>` to its end, with no EPAY_ variables of the machine's. */
export function runCli(args: string[], timeout = 15_000): Promise<CheckRun> {
  return new Promise((resolve) => {
    execFile(
      tsx,
      [cli, ...args],
      { cwd: root, timeout, env: { ...process.env, EPAY_SECRET_KEY: '', EPAY_WEBHOOK_SECRET: '' } },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? null) : 0;
        resolve({ code, output: stdout + stderr, stdout, stderr });
      },
    );
  });
}

/** The table's rows: name and result, read from the printed report. */
export function rowsOf(output: string): { name: string; result: string; line: string }[] {
  const lines = output.split('\n');
  const first = lines.findIndex((l) => l.startsWith('-----')) + 1;
  const end = lines.indexOf('', first);
  return lines.slice(first, end).map((line) => {
    const m = /^(.*?)\s{2,}(agree|DIFFERS|skipped)\s{2}/.exec(line)!;
    return { name: m[1]!, result: m[2]!, line };
  });
}

const closers: (() => Promise<void>)[] = [];
/** Close what `reference` and `listen` started, after each test of the file that imports this. */
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The reference service on the real clock: webhooks go out at once, as from `serve --allow-http-callbacks`. */
export async function reference(options: ReferenceServiceOptions = {}): Promise<Started> {
  const started = await start({ clock: 'real', allowHttpCallbacks: true, ...options });
  closers.push(async () => {
    await started.close();
    started.service.close();
  });
  return started;
}

/** A node:http server on 127.0.0.1, port 0, closed after the test: its base URL. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A service answering every request with `answer(request, body)`, after reading the body. */
export function service(answer: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  return listen(
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => answer(req, Buffer.concat(chunks).toString('utf8'), res));
    }),
  );
}
