import type { Clock } from '../base/clock.js';

/** How long the body may take, on which clock. */
export interface BodyDeadline {
  /** Milliseconds the whole body may take to arrive. */
  ms: number;
  /** The clock the deadline's timer is set on. */
  clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
}

/**
 * Read a web request's body into bytes, counting them as they come (Content-Length may be absent
 * or lie) and stopping at once past `max`, or when `deadline` passes first: the reader is
 * cancelled and the bytes dropped.
 *
 * @example
 * const body = await readBodyLimited(request, 1024 * 1024, { ms: 10_000, clock: systemClock });
 * if (body === 'too-large') return new Response(null, { status: 413 });
 */
export function readBodyLimited(request: Request, max: number): Promise<Uint8Array | 'too-large'>;
export function readBodyLimited(request: Request, max: number, deadline: BodyDeadline): Promise<Uint8Array | 'too-large' | 'too-slow'>;
export async function readBodyLimited(
  request: Request,
  max: number,
  deadline?: BodyDeadline,
): Promise<Uint8Array | 'too-large' | 'too-slow'> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > max) return 'too-large';
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  let late = false;
  // A cancelled reader ends the pending read as done.
  const timer = deadline?.clock.setTimeout(() => {
    late = true;
    reader.cancel().catch(() => {});
  }, deadline.ms);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (late) return 'too-slow';
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        await reader.cancel().catch(() => {});
        return 'too-large';
      }
      chunks.push(value);
    }
  } finally {
    if (timer !== undefined) deadline!.clock.clearTimeout(timer);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
