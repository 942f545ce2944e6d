import { payhookNext } from '@payhook/next';
import { scenarioReceiver } from '../../../lib/scenario';

export const dynamic = 'force-dynamic';
const webhook = payhookNext(scenarioReceiver(process.env.PAYHOOK_TEST_LOG));

/** The mistake under test: the route reads the JSON before handing the request to payhook. */
export async function POST(request: Request): Promise<Response> {
  await request.json().catch(() => undefined);
  return webhook.POST(request);
}
