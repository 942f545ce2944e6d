import { shop } from '../../lib/shop';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export async function POST(request: Request) {
  const { status, body } = await shop().checkout(await request.json().catch(() => ({})));
  return Response.json(body, { status });
}
