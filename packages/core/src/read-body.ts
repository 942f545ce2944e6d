/**
 * Read a web request's body into bytes, counting them as they come (Content-Length may be absent
 * or lie) and stopping at once past `max`.
 *
 * @example
 * const body = await readBodyLimited(request, 1024 * 1024);
 * if (body === 'too-large') return new Response(null, { status: 413 });
 */
export async function readBodyLimited(request: Request, max: number): Promise<Uint8Array | 'too-large'> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > max) return 'too-large';
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      return 'too-large';
    }
    chunks.push(value);
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
