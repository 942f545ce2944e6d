import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver, memoryStore, type Store } from '../../src/index.js';
import { storeLog } from '../../src/store.js';

afterEach(() => vi.restoreAllMocks());

describe("a store's own lines (storeLog)", () => {
  it('go to the console until a receiver hands over its logger, then to that logger alone, at its levels', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const log = storeLog();
    log.warn('[x] before');
    const lines: string[] = [];
    const logger = {
      warn: (_f: object, m: string) => void lines.push(`warn ${m}`),
      error: (_f: object, m: string) => void lines.push(`error ${m}`),
    };
    const store: Store = { ...memoryStore(), useLogger: log.use };
    createReceiver({ secret: 'whsec_x', store, logger });
    // A second receiver on the same store does not take the lines over: each is logged once.
    createReceiver({ secret: 'whsec_y', store, logger: { warn() {}, error() {} } });
    log.warn('[x] after', { server: 'a' });
    log.error('[x] lost it');
    expect(warn.mock.calls.map((c) => c[0])).toEqual(['[x] before']);
    expect(error).not.toHaveBeenCalled();
    expect(lines).toEqual(['warn [x] after', 'error [x] lost it']);
  });

  it('respects the logger it was handed, and a logger that throws changes nothing', () => {
    const log = storeLog();
    const seen: string[] = [];
    log.use({ enabled: (level) => level === 'error', write: (level, _f, m) => void seen.push(`${level} ${m}`) });
    log.warn('[x] quiet');
    log.error('[x] loud');
    expect(seen).toEqual(['error [x] loud']);
    const throwing = storeLog();
    throwing.use({
      enabled: () => true,
      write: () => {
        throw new Error('logger down');
      },
    });
    expect(() => throwing.error('[x] still fine')).not.toThrow();
  });
});
