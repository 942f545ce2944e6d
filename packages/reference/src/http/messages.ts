import { readBodyLimited } from '@payhook/core/adapter';

/** A failure that becomes the error envelope of 2.4. Route handlers throw it; the service answers it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/** A bare JSON body with `status` (200 unless told): successes carry no envelope, as the SDKs read them. */
export function json(data: unknown, status = 200): Response {
  return new Response(JSON.stringify(data), { status, headers: JSON_TYPE });
}

/** 204 with no body (cancel). */
export function noContent(): Response {
  return new Response(null, { status: 204 });
}

/** `{"status":"error","data":{"message":…}}`, the envelope of every failure. */
export function failure(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ status: 'error', data: { message } }), {
    status,
    headers: { ...JSON_TYPE, ...headers },
  });
}

/** Read a request body as text, counting bytes as they come (Content-Length may be absent or lie). */
export async function readText(request: Request, maxBytes: number): Promise<string> {
  const bytes = await readBodyLimited(request, maxBytes);
  if (bytes === 'too-large') throw new ApiError(413, `Request body too large: send at most ${maxBytes} bytes.`);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** Read a JSON object body; an empty body is `{}` when `optional`. */
export async function readJson(
  request: Request,
  options: { maxBytes?: number; optional?: boolean } = {},
): Promise<Record<string, unknown>> {
  const text = await readText(request, options.maxBytes ?? 64 * 1024);
  if (text.trim() === '' && options.optional) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'Request body must be a JSON object: check the JSON syntax and send Content-Type: application/json.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(400, 'Request body must be a JSON object, not an array or a single value.');
  }
  return value as Record<string, unknown>;
}

/** First message of a failed zod parse, as a 400. */
export function invalid(error: { issues: ReadonlyArray<{ message: string }> }): ApiError {
  return new ApiError(400, error.issues[0]?.message ?? 'Invalid request.');
}
