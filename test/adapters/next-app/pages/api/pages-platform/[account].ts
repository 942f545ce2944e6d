import { payhookPages } from '@payhook/next';
import { scenarioReceiver } from '../../../lib/scenario';

// Next reads this statically: it must be written out here, not imported.
export const config = { api: { bodyParser: false } };
export default payhookPages(scenarioReceiver(process.env.PAYHOOK_TEST_LOG, undefined, true));
