export const dynamic = 'force-dynamic';

export async function POST(request: Request): Promise<Response> {
  return Response.json({ parsed: await request.json() });
}
