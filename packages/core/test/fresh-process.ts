import { afterEach, beforeEach, vi } from 'vitest';
import { MEMORY_STORE_REGISTRY } from '../src/base/shared-keys.js';

/** The variables core reads to recognise a serverless platform. */
export const SERVERLESS_ENV = ['VERCEL', 'NETLIFY', 'FUNCTION_TARGET', 'K_SERVICE', 'AWS_LAMBDA_FUNCTION_NAME'];

/**
 * Each test of the file starts as a fresh process would: core's warnings are once per process and
 * cause, and no platform variable is set unless the test sets it, whatever machine runs the tests.
 */
export function asFreshProcess(): void {
  const registry = globalThis as { [MEMORY_STORE_REGISTRY]?: unknown };
  beforeEach(() => {
    delete registry[MEMORY_STORE_REGISTRY];
    for (const name of SERVERLESS_ENV) vi.stubEnv(name, undefined);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.unstubAllGlobals();
    delete registry[MEMORY_STORE_REGISTRY];
  });
}
