import { packageBuild } from '../../tsup.base.js';

// The SQLite store's claims are compiled in: a Worker installs no SQLite driver, nor the package that opens files.
export default packageBuild(['src/index.ts'], { noExternal: ['@payhook/store-sqlite'] });
