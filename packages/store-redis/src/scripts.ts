/**
 * `@payhook/store-redis/scripts`: the Redis store's contract over its Lua scripts, for a store on
 * another Redis client. `@payhook/store-upstash` builds on it; so can a store on node-redis or
 * Valkey GLIDE. It loads no Redis client of its own.
 *
 * @module
 */
export {
  scriptedStore,
  STORE_SCRIPTS,
  type ScriptedStoreOptions,
  type ScriptRunner,
  type StoreScript,
} from './scripted-store.js';
