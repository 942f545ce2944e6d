import { shop } from '../../../../lib/shop';

// The board reads the request as it is, on every request.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** The board at /admin/payments and every path under it: its pages (GET, HEAD) and its actions (POST). */
export const GET = (request: Request) => shop().board.fetch(request);
export const HEAD = (request: Request) => shop().board.fetch(request);
export const POST = (request: Request) => shop().board.fetch(request);
