import { resolve } from 'node:path';
import { liveLogLine } from '../delivery/live-log.js';
import { listen } from '../http/server.js';
import { parsePageHost, publicUrlHost } from '../pages/page-guard.js';
import { createReferenceService } from '../service/create-service.js';
import type { ReferenceService } from '../contract/service-types.js';
import { createStateSaver, readStateFile, StateFileError, type StateFile, type StateSaver } from '../state/state-file.js';
import { parseFlags, UsageError } from './common.js';
import { banner } from './serve-banner.js';
import { readConfig, setupMerchants, setupSignatureHeader } from './serve-setup.js';

export const SERVE_USAGE = `Usage: payhook-reference serve [options]

Runs the reference payment service: the /v1 API, sandbox control under /_sandbox,
the checkout page and the dashboard at /_dashboard. Prints a line per webhook delivery attempt.

Options:
  --port <n>               Port to listen on (default 4010; 0 picks a free one)
  --host <addr>            Address to bind (default 127.0.0.1)
  --api-key <key>          An API key (sk_test_… or sk_live_…); repeatable. Default: a generated sandbox key
  --webhook-secret <s>     Webhook signing secret. Default: generated
  --callback-url <url>     Global callback URL for webhooks
  --allow-http-callbacks   Allow plain-http callback URLs to loopback hosts (development only)
  --signature-header <h>   Header webhooks are signed in (default X-Service-Signature, the interface's;
                           X-Epay-Signature sends them as the real service, ePay, does). With --state
                           it is saved: a restart without the flag keeps it
  --public-url <url>       Origin used in checkout URLs (default: the origin each request came to);
                           the checkout page and dashboard answer to its host too
  --page-host <name>       Another host name (name or name:port) the checkout page and dashboard answer
                           to, besides IP addresses and localhost on --port; repeatable
  --config <file>          JSON config: { "merchants": [...], "allowHttpCallbacks": bool, "publicUrl": "..." }
                           One merchant account each (a platform's several accounts), with its own id,
                           API keys, webhook secret and callback URL; a key or secret left out is
                           generated and printed. --api-key, --webhook-secret and --callback-url apply
                           to the first merchant of the file.
  --state <file>           Keep merchants (keys as sha256 digests), the webhook secret, the signature
                           header, transactions and deliveries in this file (mode 600), and load them
                           at start: a restart keeps them
  --quiet                  No live log line per delivery attempt
  -h, --help               Show this help
`;

const OPTIONS = {
  port: { type: 'string', default: '4010' },
  host: { type: 'string', default: '127.0.0.1' },
  'api-key': { type: 'string', multiple: true },
  'webhook-secret': { type: 'string' },
  'callback-url': { type: 'string' },
  'allow-http-callbacks': { type: 'boolean', default: false },
  'signature-header': { type: 'string' },
  'public-url': { type: 'string' },
  'page-host': { type: 'string', multiple: true },
  config: { type: 'string' },
  state: { type: 'string' },
  quiet: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export async function serve(argv: string[], out: (text: string) => void, err: (text: string) => void): Promise<number | 'running'> {
  const { values } = parseFlags(argv, OPTIONS, SERVE_USAGE);
  if (values.help) {
    out(SERVE_USAGE);
    return 0;
  }
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535)
    throw new UsageError(`--port must be a whole number from 0 to 65535; got ${values.port}.`);
  if (values.state === '') throw new UsageError('--state needs a file name, such as --state .payhook-state.json.');
  const stateFile = values.state === undefined ? undefined : resolve(values.state);

  let saved: StateFile | null = null;
  if (stateFile) {
    try {
      saved = readStateFile(stateFile);
    } catch (error) {
      if (error instanceof StateFileError) throw new UsageError(error.message);
      throw error;
    }
  }
  const config = values.config ? readConfig(values.config) : {};
  const publicUrl = values['public-url'] ?? config.publicUrl;
  const pageHosts = values['page-host'] ?? [];
  try {
    if (publicUrl !== undefined) publicUrlHost(publicUrl);
    pageHosts.forEach(parsePageHost);
  } catch (error) {
    throw new UsageError(
      (error as Error).message
        .replace(/^\[@payhook\/reference\] pageHosts:/, '--page-host:')
        .replace(/^\[@payhook\/reference\] publicUrl:/, '--public-url:'),
    );
  }
  const { merchants, shown } = setupMerchants({ ...values, state: stateFile }, config, saved);
  const signature = setupSignatureHeader(values['signature-header'], saved);

  let saver: StateSaver | undefined;
  let service: ReferenceService;
  try {
    service = createReferenceService({
      merchants,
      allowHttpCallbacks: values['allow-http-callbacks'] || config.allowHttpCallbacks === true,
      publicUrl,
      pageHosts,
      signatureHeader: signature.header,
      state: saved ?? undefined,
      // With several merchants each line names the delivery's merchant, so a platform's accounts can be told apart.
      onDeliveryAttempt: values.quiet ? undefined : (d, a) => out(`${liveLogLine(d, a, merchants.length > 1)}\n`),
      onChange: () => saver?.schedule(),
    });
  } catch (error) {
    const message = (error as Error).message.replace(/^\[@payhook\/reference\] /, '');
    throw new UsageError(
      saved
        ? `the state file ${stateFile} holds merchants the service refuses (${message}): fix it, or move it away to start afresh.`
        : message,
    );
  }
  if (saved && saved.clockOffsetMs > 0) await service.clock.advance(saved.clockOffsetMs);
  if (stateFile) {
    const file = stateFile;
    // Whole seconds, so the wall clock's drift between saves does not count as a change.
    const offset = () => Math.max(0, Math.round((service.clock.now() - Date.now()) / 1000) * 1000);
    saver = createStateSaver(
      file,
      () => ({ merchants, signatureHeader: signature.header, clockOffsetMs: offset(), ...service.snapshot() }),
      (m) => err(`[@payhook/reference] ${m}\n`),
    );
    const problem = saver.flush();
    if (problem) {
      service.close();
      throw new UsageError(problem);
    }
  }

  const running = await listen(service, { port, host: values.host }).catch((error: Error) => {
    service.close();
    throw new UsageError(`cannot listen on ${values.host}:${port} (${error.message}); pick another --port.`);
  });
  // Before the banner: whoever waits for it may stop the service at once, and the state must be saved.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const problem = saver?.flush();
    if (problem) err(`[@payhook/reference] ${problem}\n`);
    out(`payhook-reference: ${signal}, shutting down\n`);
    void running.close().then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const loaded = saved ? `loaded ${saved.transactions.length} transactions and ${saved.deliveries.length} deliveries` : 'new';
  const state = stateFile ? `  state file      ${stateFile} (${loaded}; saved on every change)` : undefined;
  out(banner({ url: running.url, merchants, shown, state, signature: signature.shown }));

  return 'running';
}
