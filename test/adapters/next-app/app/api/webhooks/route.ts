import { payhookNext } from '@payhook/next';
import { scenarioReceiver } from '../../../lib/scenario';

// The receiver logs to the file the test names when it starts the server.
export const dynamic = 'force-dynamic';
export const { POST, GET } = payhookNext(scenarioReceiver(process.env.PAYHOOK_TEST_LOG, process.env.PAYHOOK_TEST_SIGNATURE_HEADER));
