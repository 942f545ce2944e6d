// A platform's one webhook endpoint for the merchant-account tests: every path on one real server,
// each request kept with its path, and a wait for the next one on a path (no polling, no sleep).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '@payhook/core';

export interface Hook {
  path: string;
  body: Buffer;
  headers: IncomingHttpHeaders;
}

export interface PlatformHooks {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  hooks: Hook[];
  /** The first request on `path` not taken yet, as soon as it arrives. */
  next(path: string): Promise<Hook>;
  close(): Promise<void>;
}

/** Start the endpoint on 127.0.0.1, port 0; `answer` gives each request's status (default 200). */
export async function platformHooks(answer: (hook: Hook) => number = () => 200): Promise<PlatformHooks> {
  const hooks: Hook[] = [];
  const taken = new Set<Hook>();
  const waiting = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hook = { path: req.url ?? '', body: Buffer.concat(chunks), headers: req.headers };
      hooks.push(hook);
      res.writeHead(answer(hook)).end();
      for (const wake of waiting) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hooks,
    next: (path) =>
      new Promise<Hook>((resolve) => {
        const look = () => {
          const hook = hooks.find((h) => h.path === path && !taken.has(h));
          if (!hook) return;
          taken.add(hook);
          waiting.delete(look);
          resolve(hook);
        };
        waiting.add(look);
        look();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Which of `secrets` verify the hook's `X-Service-Signature` (core's verifySignature, each secret alone). */
export const verifiedBy = (hook: Hook, secrets: Record<string, string>): string[] =>
  Object.entries(secrets)
    .filter(([, secret]) => verifySignature(hook.body, hook.headers['x-service-signature'], secret).ok)
    .map(([id]) => id);
