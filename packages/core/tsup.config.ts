import { packageBuild } from '../../tsup.base.js';

// The platform modules are entries of their own: package.json picks one by export condition
// (`#crypto` internally, `@payhook/core/bridge` for adapters), so no build carries both.
export default packageBuild(
  {
    index: 'src/index.ts',
    node: 'src/node.ts',
    adapter: 'src/adapter.ts',
    api: 'src/api.ts',
    'platform/crypto-node': 'src/platform/crypto-node.ts',
    'platform/crypto-web': 'src/platform/crypto-web.ts',
    'platform/bridge-node': 'src/platform/bridge-node.ts',
    'platform/bridge-none': 'src/platform/bridge-none.ts',
  },
  { external: ['#crypto'] },
);
