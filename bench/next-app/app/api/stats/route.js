import { benchCounts } from '../../../lib.js';

export const dynamic = 'force-dynamic';
export function GET() {
  return Response.json(benchCounts);
}
