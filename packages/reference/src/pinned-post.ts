import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { SIGNATURE_HEADER } from '@payhook/core';
import type { CallbackTarget } from './callback-url.js';
import type { Delivery } from './delivery-record.js';

/** The keep-alive pools the dispatcher reuses across attempts. */
export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * POST the delivery to the checked address only: the socket connects to `target.address` whatever
 * a second resolution of the name would say, while the Host header and TLS name stay the URL's.
 * Redirects are not followed. Resolves with the status once the answer's head has come.
 *
 * @example
 * const target = await resolveCallbackTarget(delivery.url, { allowLoopback: false });
 * if (target.ok) status = await postToPinnedAddress(target, delivery, controller.signal, agents);
 */
export function postToPinnedAddress(
  target: Extract<CallbackTarget, { ok: true }>,
  d: Delivery,
  signal: AbortSignal,
  agents: Agents,
): Promise<number> {
  const { url, address, family } = target;
  const pinned: LookupFunction = (_hostname, opts, callback) => {
    if (opts.all) (callback as unknown as (e: null, list: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const tls = url.protocol === 'https:';
  const once = (retried: boolean): Promise<number> => new Promise((resolve, reject) => {
    const req = (tls ? https : http).request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(d.body),
          [SIGNATURE_HEADER]: d.signature,
          'user-agent': 'payhook-reference',
        },
        agent: tls ? agents.https : agents.http,
        lookup: pinned,
        signal,
      },
      (res) => {
        // The body is not needed; draining it keeps the connection reusable.
        res.resume();
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
