#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateApiKey, generateWebhookSecret, type MerchantConfig } from './merchants.js';
import { createReferenceService } from './service.js';

const USAGE = `Usage: payhook-reference serve [options]

Runs the reference payment service: the /v1 API, sandbox control under /_sandbox,
the checkout page and the dashboard at /_dashboard.

Options:
  --port <n>               Port to listen on (default 4010; 0 picks a free one)
  --host <addr>            Address to bind (default 127.0.0.1)
  --api-key <key>          An API key (sk_test_… or sk_live_…); repeatable. Default: a generated sandbox key
  --webhook-secret <s>     Webhook signing secret. Default: generated
  --callback-url <url>     Global callback URL for webhooks
  --allow-http-callbacks   Allow plain-http callback URLs to loopback hosts (development only)
  --public-url <url>       Origin used in checkout URLs (default: the origin each request came to)
  --config <file>          JSON config: { "merchants": [...], "allowHttpCallbacks": bool, "publicUrl": "..." }
                           Flags above apply to the first merchant of the file.
  -h, --help               Show this help
`;

interface ConfigFile {
  merchants?: MerchantConfig[];
  allowHttpCallbacks?: boolean;
  publicUrl?: string;
}

const mask = (secret: string) => `${secret.slice(0, 8)}…${secret.slice(-4)} (given; not shown)`;

function fail(message: string): never {
  process.stderr.write(`[@payhook/reference] ${message}\n`);
  process.exit(2);
}

function readConfig(file: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    fail(`cannot read the config file ${file} (${(error as Error).message}); check the path.`);
  }
  try {
    const parsed = JSON.parse(text) as ConfigFile;
    if (typeof parsed !== 'object' || parsed === null || (parsed.merchants !== undefined && !Array.isArray(parsed.merchants))) {
      fail(`${file} must hold a JSON object whose "merchants" is a list.`);
    }
    return parsed;
  } catch (error) {
    fail(`${file} is not valid JSON (${(error as Error).message}).`);
  }
}

async function main(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string', default: '4010' },
        host: { type: 'string', default: '127.0.0.1' },
        'api-key': { type: 'string', multiple: true },
        'webhook-secret': { type: 'string' },
        'callback-url': { type: 'string' },
        'allow-http-callbacks': { type: 'boolean', default: false },
        'public-url': { type: 'string' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (positionals[0] !== 'serve' || positionals.length > 1) fail(`expected the command "serve".\n\n${USAGE}`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be a whole number from 0 to 65535; got ${values.port}.`);

  const config = values.config ? readConfig(values.config) : {};
  const merchants = config.merchants?.length ? config.merchants.map((m) => ({ ...m })) : [];
  const first: MerchantConfig = merchants[0] ?? { id: 'default', apiKeys: [], webhookSecret: '' };
  if (merchants.length === 0) merchants.push(first);
  const shown: string[] = [];

  const keys = values['api-key'] ?? [];
  first.apiKeys = [...(first.apiKeys ?? []), ...keys.map((key) => ({ key }))];
  for (const key of keys) if (key.startsWith('sk_test_')) shown.push(`  sandbox key     ${mask(key)}`);
  if (!first.apiKeys.some((k) => (k.key ?? '').startsWith('sk_test_') || k.mode === 'sandbox')) {
    const key = generateApiKey('sandbox');
    first.apiKeys.push({ key });
    shown.push(`  sandbox key     ${key}`);
  }
  if (values['webhook-secret']) {
    first.webhookSecret = values['webhook-secret'];
    shown.push(`  webhook secret  ${mask(first.webhookSecret)}`);
  } else if (!first.webhookSecret) {
    first.webhookSecret = generateWebhookSecret();
    shown.push(`  webhook secret  ${first.webhookSecret}`);
  } else {
    shown.push(`  webhook secret  ${mask(first.webhookSecret)}`);
  }
  if (values['callback-url']) first.callbackUrl = values['callback-url'];

  let service;
  try {
    service = createReferenceService({
      merchants,
      allowHttpCallbacks: values['allow-http-callbacks'] || config.allowHttpCallbacks === true,
      publicUrl: values['public-url'] ?? config.publicUrl,
    });
  } catch (error) {
    fail((error as Error).message.replace(/^\[@payhook\/reference\] /, ''));
  }
  const running = await service.listen({ port, host: values.host }).catch((error: Error) =>
    fail(`cannot listen on ${values.host}:${port} (${error.message}); pick another --port.`),
  );
  process.stdout.write(
    [
      `payhook-reference listening on ${running.url}`,
      `  dashboard       ${running.url}/_dashboard`,
      ...shown,
      `  callback URL    ${first.callbackUrl ?? '(none: pass --callback-url or callbackUrl at initialize)'}`,
      '',
    ].join('\n'),
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`payhook-reference: ${signal}, shutting down\n`);
    void running.close().then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

void main(process.argv.slice(2));
