import type pg from 'pg';

/**
 * Record the text of every statement sent through `pool.query` (the store's own claims, completes,
 * releases and extends; a `transactional()` transaction runs on a checked-out client and is not
 * seen). `restore()` puts the pool's own `query` back.
 */
export function statementsSent(pool: pg.Pool): { texts: string[]; restore(): void } {
  const texts: string[] = [];
  const query = pool.query;
  const own = query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = ((config: { text?: string } | string, ...rest: unknown[]) => {
    texts.push(typeof config === 'string' ? config : (config.text ?? ''));
    return own(config, ...rest);
  }) as typeof pool.query;
  return { texts, restore: () => void (pool.query = query) };
}
