import { payhookNext } from '@payhook/next';
import { matrixApp, runsAnswer } from '../../../lib/matrix.mjs';

// The Edge route on the Upstash store: one `next start` process is one instance, and the test runs two.
export const runtime = 'edge';
export const dynamic = 'force-dynamic';

export const { POST } = payhookNext(() => matrixApp('edge', 'upstash').receiver);
export const GET = (request) => runsAnswer(matrixApp('edge', 'upstash'), new URL(request.url));
