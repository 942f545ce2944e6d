import { payhookNext } from '@payhook/next';
import { matrixApp, runsAnswer } from '../../../lib/matrix.mjs';

// One route for both: an Edge function has a module scope of its own, so the read-out lives beside the receiver.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const { POST } = payhookNext(() => matrixApp('node').receiver);
export const GET = (request) => runsAnswer(matrixApp('node'), new URL(request.url));
