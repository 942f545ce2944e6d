import { payhookNext } from '@payhook/next';
import type { NextRequest } from 'next/server';
import { shop } from '../../lib/shop';

// payhook reads the untouched body and verifies it with node:crypto.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

/** POST is the receiver; the other methods answer 405 through payhook too. */
export const POST = (request: NextRequest) => payhookNext(shop().receiver).POST(request);
export const GET = (request: NextRequest) => payhookNext(shop().receiver).GET(request);
