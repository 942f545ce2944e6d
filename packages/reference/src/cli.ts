#!/usr/bin/env node
import { escapeText } from '@payhook/core/api';
import { check, CHECK_USAGE } from './cli/check.js';
import { RunError, UsageError } from './cli/common.js';
import { resend, RESEND_USAGE } from './cli/resend.js';
import { serve, SERVE_USAGE } from './cli/serve.js';
import { trigger, TRIGGER_USAGE } from './cli/trigger.js';

const USAGE = `Usage: payhook-reference <command> [options]

Commands:
  serve                 Run the reference payment service (API, sandbox control, checkout, dashboard)
  trigger <event>       Make a running service send <event> to your callback URL
  resend <delivery-id>  Make a running service deliver a webhook again
  check <base-url>      Check a service (this one, or ePay's sandbox) against the contract

Run payhook-reference <command> --help for a command's options.
`;

const COMMANDS = { serve, trigger, resend, check } as const;
const USAGES: Record<string, string> = { serve: SERVE_USAGE, trigger: TRIGGER_USAGE, resend: RESEND_USAGE, check: CHECK_USAGE };

const out = (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
const err = (text: string) => process.stderr.write(text);
/** An error's text, each line's control characters written out: it may quote an argument or what a service sent. */
const plain = (text: string) =>
  text
    .split('\n')
    .map((line) => escapeText(line))
    .join('\n');

async function main(argv: string[]): Promise<number | 'running'> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    if (command === 'help' && rest[0] && USAGES[rest[0]]) out(USAGES[rest[0]]!);
    else out(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (!Object.hasOwn(COMMANDS, command)) throw new UsageError(`unknown command "${command}".\n\n${USAGE}`);
  return COMMANDS[command as keyof typeof COMMANDS](rest, out, err);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 'running') process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof RunError) {
      err(`[@payhook/reference] ${plain(error.message)}\n`);
      process.exitCode = error instanceof RunError ? error.exitCode : 2;
      return;
    }
    err(`[@payhook/reference] unexpected error: ${plain((error as Error)?.stack ?? String(error))}\n`);
    process.exitCode = 1;
  },
);
