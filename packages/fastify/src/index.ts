/**
 * `@payhook/fastify`: the Fastify 4 and 5 plugin for `@payhook/core`.
 *
 * @module
 */
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Receiver } from '@payhook/core';
import { adapterOf, nodeBridgeFor, type BodyDeadline, type ReceiverResult } from '@payhook/core/adapter';

const { lingerOnClose, processNodeRequest } = nodeBridgeFor('Fastify');

/** What `payhookFastify` takes: the receiver, and the route it answers at. */
export interface PayhookFastifyOptions {
  /** The receiver that answers the webhook route. */
  receiver: Receiver;
  /** The webhook route. Default `/webhooks` (under the plugin's `prefix`, if any). */
  path?: string;
}

const TOO_SLOW = 'PAYHOOK_BODY_TOO_SLOW';

const send = (reply: FastifyReply, r: ReceiverResult) => {
  // An answer that closes the connection before the body was read: let the client read it first.
  if (r.headers.connection === 'close') lingerOnClose(reply.raw);
  return reply.code(r.status).headers(r.headers).send(r.body);
};

/** The body as Fastify's parser reads it, cut off with an error Fastify passes on when the deadline passes first. */
function withDeadline(payload: Readable, { ms, clock }: BodyDeadline): Readable {
  const out = new PassThrough();
  const timer = clock.setTimeout(() => {
    payload.unpipe(out);
    payload.pause();
    out.destroy(
      Object.assign(new Error(`[@payhook/fastify] the body did not arrive within ${ms} ms`), { code: TOO_SLOW, statusCode: 408 }),
    );
  }, ms);
  const stop = () => clock.clearTimeout(timer);
  out.once('end', stop).once('close', stop);
  // Fastify stops listening once it has an answer (a 413, say): a late error must not go unheard.
  out.on('error', () => {});
  payload.once('error', (error) => out.destroy(error));
  return payload.pipe(out);
}

/**
 * The webhook route for Fastify 4 and 5, as an encapsulated plugin: its buffer parsers apply to
 * its own route only, so the app's JSON parsing elsewhere is unchanged. Do not wrap it in
 * fastify-plugin.
 *
 * @example
 * const app = Fastify();
 * await app.register(payhookFastify, { receiver, path: '/webhooks' });
 */
export const payhookFastify: FastifyPluginAsync<PayhookFastifyOptions> = async (instance, options) => {
  const { receiver, path = '/webhooks' } = options;
  // This scope only: drop the parsers inherited from the app and keep every body as raw bytes.
  instance.removeAllContentTypeParsers();
  const { process, fail, maxBodyBytes, bodyDeadline, signatureHeader } = adapterOf(receiver);
  const keepBytes = { parseAs: 'buffer' as const, bodyLimit: maxBodyBytes };
  const asIs = (_req: unknown, body: Buffer | string, done: (error: null, body: Buffer | string) => void) => done(null, body);
  instance.addContentTypeParser('application/json', keepBytes, asIs);
  instance.addContentTypeParser('*', keepBytes, asIs);
  // Fastify reads the body itself and sets no time limit by default: the receiver's deadline applies here.
  instance.addHook('preParsing', async (_request, reply, payload) => {
    const body = withDeadline(payload, bodyDeadline);
    // Answered before the body ended (a 413): the deadline has nothing left to cut.
    reply.raw.once('finish', () => body.destroy());
    return body;
  });
  instance.setErrorHandler(async (error, request, reply) => {
    // Fastify counts the bytes against bodyLimit as they stream in; the pipeline answers.
    const code = (error as { code?: string }).code;
    const problem = code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'too-large' : code === TOO_SLOW ? 'too-slow' : undefined;
    const signature = request.headers[signatureHeader];
    if (problem) return send(reply, await process({ method: request.method, signature, problem, framework: 'fastify' }));
    // Fastify's other request errors (a Content-Length that does not match the body) are the pipeline's
    // 400; anything else its bare 500, logged: Fastify's own answer would carry the error's message.
    const status = (error as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500)
      return send(reply, await process({ method: request.method, signature, problem: 'unreadable', error, framework: 'fastify' }));
    return send(reply, fail(error));
  });
  instance.all(path, async (request, reply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    return send(reply, await processNodeRequest(receiver, request.raw, { body, framework: 'fastify' }));
  });
};
