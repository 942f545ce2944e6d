import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CallbackTarget } from './callback-url.js';
import { RESPONSE_BODY_LIMIT, type Delivery } from './delivery-record.js';

/** The keep-alive pools the dispatcher reuses across attempts. */
export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * POST the delivery to the checked address only: the socket connects to `target.address` whatever
 * a second resolution of the name would say, while the Host header and TLS name stay the URL's.
 * Redirects are not followed. Resolves with the status once the answer's head has come; `onBody`
 * gets the start of the answer's body (at most RESPONSE_BODY_LIMIT bytes) once it has come, later.
 *
 * @example
 * const target = await resolveCallbackTarget(delivery.url, { allowLoopback: false });
 * if (target.ok) status = await postToPinnedAddress(target, delivery, 'x-service-signature', controller.signal, agents);
 */
export function postToPinnedAddress(
  target: Extract<CallbackTarget, { ok: true }>,
  d: Delivery,
  signatureHeader: string,
  signal: AbortSignal,
  agents: Agents,
  onBody?: (text: string) => void,
): Promise<number> {
  const { url, address, family } = target;
  const pinned: LookupFunction = (_hostname, opts, callback) => {
    if (opts.all) (callback as unknown as (e: null, list: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const tls = url.protocol === 'https:';
  const once = (retried: boolean): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = (tls ? https : http).request(
        url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(d.body),
            [signatureHeader]: d.signature,
            'user-agent': 'payhook-reference',
          },
          agent: tls ? agents.https : agents.http,
          lookup: pinned,
          signal,
        },
        (res) => {
          // Keep the start of the body (shown on the dashboard), drain the rest: the connection stays reusable.
          const chunks: Buffer[] = [];
          let size = 0;
          let told = false;
          const tell = () => {
            if (told) return;
            told = true;
            onBody?.(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8'));
          };
          res.on('data', (chunk: Buffer) => {
            if (size >= RESPONSE_BODY_LIMIT) return;
            chunks.push(chunk);
            size += chunk.length;
            if (size >= RESPONSE_BODY_LIMIT) tell();
          });
          res.on('end', tell);
          res.on('error', () => {});
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive connection the receiver closed as we reused it (Node's documented race): send once more on a new one.
        if (!retried && req.reusedSocket && error.code === 'ECONNRESET' && !signal.aborted) resolve(once(true));
        else reject(error);
      });
      req.end(d.body);
    });
  return once(false);
}
