import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReferenceService, type ReferenceService, type ReferenceServiceOptions } from '@payhook/reference';
import { expect } from 'vitest';

export const SANDBOX_KEY = 'sk_test_shop_main_key_0001';
export const OTHER_KEY = 'sk_test_shop_other_key_0002';
export const LIVE_KEY = 'sk_live_shop_live_key_0003';
export const READ_ONLY_KEY = 'sk_test_shop_read_only_0004';
export const REVOKED_KEY = 'sk_test_shop_revoked_0005';
export const FAR_KEY = 'sk_test_far_away_key_0006';
export const NO_SOURCE_KEY = 'sk_test_no_source_key_0007';
export const SECRET = 'whsec_reference_test_secret';

export const validInput = (overrides: Record<string, unknown> = {}) => ({
  amount: '100.00',
  currencyCode: 'ETB',
  customerPhone: '0912345678',
  merchantReference: 'order-1',
  ...overrides,
});

export interface Started {
  service: ReferenceService;
  url: string;
  close(): Promise<void>;
  /** A real HTTP request to the running service. */
  call(method: string, path: string, init?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<Called>;
  /** Initialize a transaction from `validInput(overrides)`, expecting 200; its reference. */
  initialize(overrides?: Record<string, unknown>, key?: string): Promise<string>;
}

export interface Called {
  status: number;
  headers: Headers;
  json: any;
}

/** The merchants of the black-box suites. */
export function merchants(callbackUrl?: string): NonNullable<ReferenceServiceOptions['merchants']> {
  return [
    {
      id: 'shop',
      name: 'Shop <Test>',
      apiKeys: [
        { key: SANDBOX_KEY },
        { key: OTHER_KEY },
        { key: LIVE_KEY },
        { key: READ_ONLY_KEY, permissions: ['transactions:read'] },
        { key: REVOKED_KEY, revoked: true },
      ],
      webhookSecret: SECRET,
      callbackUrl,
    },
    { id: 'far', apiKeys: [{ key: FAR_KEY }], ipWhitelist: ['10.1.2.3', '192.168.0.0/16'], webhookSecret: SECRET },
    { id: 'nosource', apiKeys: [{ key: NO_SOURCE_KEY }], webhookSecret: SECRET, paymentSourceActive: false },
  ];
}

/** Start a reference service on 127.0.0.1, port 0, with a manual clock. */
export async function start(options: ReferenceServiceOptions = {}): Promise<Started> {
  const service = createReferenceService({ clock: 'manual', merchants: merchants(), ...options });
  const running = await service.listen({ port: 0, host: '127.0.0.1' });
  const started: Started = {
    service,
    url: running.url,
    close: running.close,
    async initialize(overrides = {}, key = SANDBOX_KEY) {
      const res = await started.call('POST', '/v1/transactions/initialize', { key, body: validInput(overrides) });
      expect(res.status).toBe(200);
      return res.json.reference;
    },
    async call(method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      const key = init.key === undefined ? SANDBOX_KEY : init.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      let body: string | undefined;
      if (init.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      }
      const res = await fetch(running.url + path, { method, headers, body });
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: res.status, headers: res.headers, json };
    },
  };
  return started;
}

/** Assert the error envelope of 2.4 with `status` and a message containing `includes`. */
export function expectError(res: Called, status: number, includes?: string | RegExp): void {
  expect({ status: res.status, body: res.json }).toMatchObject({
    status,
    body: { status: 'error', data: { message: expect.any(String) } },
  });
  expect(Object.keys(res.json)).toEqual(['status', 'data']);
  if (includes !== undefined) expect(res.json.data.message).toMatch(includes);
}

export interface Received {
  body: Buffer;
  headers: IncomingMessage['headers'];
}

export interface Receiver {
  url: string;
  requests: Received[];
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1:0; `answer` decides each response (default 200). */
export async function receiver(
  answer: (n: number, req: Received, res: ServerResponse) => void | Promise<void> = (_n, _r, res) => {
    res.writeHead(200).end('ok');
  },
): Promise<Receiver> {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = { body: Buffer.concat(chunks), headers: req.headers };
      requests.push(received);
      void answer(requests.length, received, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
