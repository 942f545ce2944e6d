import { SIGNATURE_HEADER, floorVerify } from '../../../../http/shared.mjs';
import { benchHandle } from '../../../lib.js';

export const dynamic = 'force-dynamic';

// The hand-written App Router route: raw bytes, createHmac + timingSafeEqual, JSON.parse, 200.
export async function POST(request) {
  const raw = Buffer.from(await request.arrayBuffer());
  const event = floorVerify(raw, request.headers.get(SIGNATURE_HEADER));
  if (!event) return new Response('{"outcome":"unauthorized"}', { status: 401, headers: { 'content-type': 'application/json' } });
  benchHandle('floor', event);
  return new Response('{"outcome":"processed"}', { status: 200, headers: { 'content-type': 'application/json' } });
}
