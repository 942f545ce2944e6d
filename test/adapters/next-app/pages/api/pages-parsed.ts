import { payhookPages } from '@payhook/next';
import { scenarioReceiver } from '../../lib/scenario';

// The mistake under test: Next's body parser left on.
export default payhookPages(scenarioReceiver(process.env.PAYHOOK_TEST_LOG));
