import { shop } from '../../../lib/shop';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export async function GET(_request: Request, { params }: { params: Promise<{ merchantReference: string }> }) {
  const { status, body } = shop().order((await params).merchantReference);
  return Response.json(body, { status });
}
