import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The recorded answers of the official SDKs' own test suites, as data: field names and values
 * only. Each constant names the SDK file and the test that records it.
 */

/** go-sdk client_test.go `sessionJSON`; php-sdk tests/ClientTest.php `SESSION`. */
export const SESSION = {
  reference: 'PAB12CD3420260813',
  checkoutUrl: 'https://checkout.epayethiopia.com/pay/PAB12CD3420260813',
  status: 'success',
  expiresAt: '2026-08-13T12:30:00.000Z',
};

/** go-sdk client_test.go TestVerifyReturnsTheReceipt: note it has no `currencyCode`. */
export const RECEIPT = {
  reference: 'PAB1',
  status: 'completed',
  amount: '250.00',
  serviceFee: '7.50',
  customer: { name: 'Abebe Bikila', email: null, phone: '+251911234567' },
  paidAt: '2026-08-13T11:47:00.000Z',
  createdAt: '2026-08-13T11:30:00.000Z',
};

/** go-sdk TestVerifyReportsAnIncompleteTransaction; php-sdk testVerifyReportsAnIncompleteTransaction. */
export const NOT_COMPLETED = { status: 'error', data: { message: 'Transaction is not completed. Current status: pending' } };

/** The row of go-sdk TestIterateWalksEveryPageAndKeepsFilters and php-sdk testIteratingAPageWalksEveryFollowingPage. */
export const row = (reference: string) => ({
  reference,
  merchantReference: null,
  status: 'completed',
  amount: '10.00',
  currencyCode: 'ETB',
  paidAt: null,
  createdAt: '2026-08-13T11:30:00.000Z',
});

/** The three pages of the same two tests. */
export const PAGES = [
  { data: [row('P1'), row('P2')], nextCursor: 'cur_1', hasMore: true },
  { data: [row('P3')], nextCursor: 'cur_2', hasMore: true },
  { data: [row('P4')], nextCursor: null, hasMore: false },
];

/** go-sdk and php-sdk ListBuildsTheDocumentedQuery: an empty, last page. */
export const EMPTY_PAGE = { data: [], nextCursor: null, hasMore: false };

/** go-sdk TestTimelineDecodesErrorDetails. */
export const TIMELINE = {
  reference: 'PFF98AB1220260812',
  events: [
    { eventType: 'session_created', occurredAt: 'a', errorCode: null, errorMessage: null },
    { eventType: 'payment_failed', occurredAt: 'b', errorCode: 'INSUFFICIENT_FUNDS', errorMessage: 'no balance' },
  ],
};

/** go-sdk TestProvidersAreUnwrappedFromTheEnvelope; php-sdk testProvidersAreUnwrappedFromTheEnvelope. */
export const PROVIDER_ITEMS = { data: [{ providerCode: 'telebirr', providerName: 'Telebirr', flowCode: 'ussd' }] };

/** go-sdk TestListEnabledFiltersDisabledProviders. */
export const PROVIDERS = {
  data: [
    { providerCode: 'cbe_birr', flowCode: 'mobile_banking', isEnabled: true },
    { providerCode: 'awash_bank', flowCode: 'mobile_banking', isEnabled: false },
  ],
};

/** go-sdk TestAMissingPermissionIsPermissionDenied; php-sdk testAMissingPermissionSurfacesAsPermissionDenied. */
export const MISSING_PERMISSION = { statusCode: 403, message: 'Missing get_platform_payment_provider permission', error: 'Forbidden' };

/** go-sdk TestA429IsRetriedAndReusesTheIdempotencyKey; php-sdk testA429IsRetriedAndReusesTheIdempotencyKey. */
export const RATE_LIMITED = { status: 'error', data: { message: 'Rate limit exceeded' } };

/** One scripted answer: a JSON body (or none), a status, headers. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** What the client sent. */
export interface Recorded {
  method: string;
  /** The raw path, as it came on the wire (percent-encoding kept). */
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface ScriptedServer {
  url: string;
  calls: Recorded[];
  /** The answers for the next requests, in order; a request beyond them gets a 599 and is recorded. */
  script(...replies: Reply[]): void;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1, port 0, that answers with scripted replies and records every request. */
export async function scriptedServer(): Promise<ScriptedServer> {
  const calls: Recorded[] = [];
  let replies: Reply[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [path, query = ''] = (req.url ?? '/').split('?');
      calls.push({
        method: req.method!,
        path: path!,
        query: new URLSearchParams(query),
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const reply = replies.shift() ?? { status: 599, body: { status: 'error', data: { message: 'unexpected extra request' } } };
      const headers: Record<string, string> = { ...reply.headers };
      if (reply.body !== undefined) headers['content-type'] = 'application/json';
      res.writeHead(reply.status, headers).end(reply.body === undefined ? undefined : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    script(...next) {
      replies = next;
      calls.length = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
