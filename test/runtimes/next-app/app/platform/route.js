// What the platform's waitUntil was handed (../../platform.cjs): each promise, when given, when settled.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export const GET = () => Response.json(globalThis[Symbol.for('payhook.matrix.platform')] ?? []);
