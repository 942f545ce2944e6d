import { packageBuild } from '../../tsup.base.js';

// The Redis store's scripts are compiled in: installing this package pulls in neither
// @payhook/store-redis nor its ioredis peer, which an HTTP-only platform has no use for.
export default packageBuild(['src/index.ts'], { noExternal: ['@payhook/store-redis'] });
