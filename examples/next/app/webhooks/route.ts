import { payhookNext } from '@payhook/next';
import { shop } from '../../lib/shop';

// The shop keeps its orders in process memory, so this route stays on the Node runtime.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

// POST is the receiver; the other methods answer 405 through payhook too. The receiver is made
// on the first request, so `next build` needs no secret.
export const { POST, GET } = payhookNext(() => shop().receiver);
