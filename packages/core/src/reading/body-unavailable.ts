/** How to give payhook the untouched body in each framework, for the error when a parser got there first. */
const FIX: Record<string, string> = {
  express:
    'mount the payhook route before express.json(), or keep the raw bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }), which payhookExpress reads',
  fastify: 'register the payhook plugin in its own scope so its buffer parser handles the route',
  hono: 'mount the webhook route before any validator or middleware that reads the body, and do not call c.req.json() (or c.req.text(), c.req.parseBody()) before it',
  next: 'in the Pages Router, export const config = { api: { bodyParser: false } } from the API route; in the App Router, do not read the request (request.json(), request.text()) before payhook',
};

/**
 * The error message for a body that something read before payhook; names the fix for `framework`.
 * `request`: a web Request whose body was used, with no framework to name.
 */
export function bodyUnavailable(framework: string | undefined, parsed: unknown, source: 'stream' | 'request' = 'stream'): string {
  if (source === 'request' && framework === undefined) {
    return (
      '[@payhook/core] the request body was already read before payhook saw it, so its signature cannot be checked. ' +
      'Give the receiver the untouched request: mount it before any body parser.'
    );
  }
  const what = parsed === undefined ? 'the request stream was already read' : 'a body parser already parsed the request';
  return `[@payhook/${framework ?? 'core'}] ${what}, so the signature cannot be checked on the raw bytes: ${
    FIX[framework ?? ''] ?? 'give payhook the untouched request before any body parser'
  }.`;
}
