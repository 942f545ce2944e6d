export { redisStore, type RedisStore, type RedisStoreOptions } from './redis-store.js';
