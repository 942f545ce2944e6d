/**
 * `@payhook/store-redis`: the Redis store, on ioredis: exactly-once webhook handling across processes.
 *
 * @module
 */
export { redisStore, type RedisStore, type RedisStoreOptions } from './redis-store.js';
