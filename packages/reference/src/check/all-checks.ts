// The list of checks, apart from contract.ts: the check files import its helpers, so it cannot import them back.
import { API_CHECKS } from './checks-api.js';
import { LIST_CHECKS } from './checks-list.js';
import { RATE_CHECKS } from './checks-rate.js';
import { WEBHOOK_CHECKS } from './checks-webhook.js';
import type { Check } from './contract.js';

/** The service's black-box contract, in the order it runs: the rate-limit probe last, as it uses the key up. */
export const CHECKS: Check[] = [...API_CHECKS, ...LIST_CHECKS, ...WEBHOOK_CHECKS, ...RATE_CHECKS];
