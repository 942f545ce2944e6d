import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Receiver } from '@payhook/core';
import { adapterOf, type ReceiverResult } from '@payhook/core/adapter';
import { processNodeRequest } from '@payhook/core/node';

export interface PayhookFastifyOptions {
  receiver: Receiver;
  /** The webhook route. Default `/webhooks` (under the plugin's `prefix`, if any). */
  path?: string;
}

const send = (reply: FastifyReply, r: ReceiverResult) => reply.code(r.status).headers(r.headers).send(r.body);

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
  const { process, maxBodyBytes, signatureHeader } = adapterOf(receiver);
  const keepBytes = { parseAs: 'buffer' as const, bodyLimit: maxBodyBytes };
  const asIs = (_req: unknown, body: Buffer | string, done: (error: null, body: Buffer | string) => void) => done(null, body);
  instance.addContentTypeParser('application/json', keepBytes, asIs);
  instance.addContentTypeParser('*', keepBytes, asIs);
  instance.setErrorHandler(async (error, request, reply) => {
    // Fastify counts the bytes against bodyLimit as they stream in; the pipeline answers.
    if ((error as { code?: string }).code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error;
    const signature = request.headers[signatureHeader];
    return send(reply, await process({ method: request.method, signature, problem: 'too-large', framework: 'fastify' }));
  });
  instance.all(path, async (request, reply) => {
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    return send(reply, await processNodeRequest(receiver, request.raw, { body, framework: 'fastify' }));
  });
};
