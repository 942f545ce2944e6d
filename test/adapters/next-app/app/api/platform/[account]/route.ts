import { payhookNext } from '@payhook/next';
import { scenarioReceiver } from '../../../../lib/scenario';

// The platform's route: one receiver for every account, the account in the path's last segment.
export const dynamic = 'force-dynamic';
export const { POST } = payhookNext(scenarioReceiver(process.env.PAYHOOK_TEST_LOG, undefined, true));
