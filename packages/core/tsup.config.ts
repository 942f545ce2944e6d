import { packageBuild } from '../../tsup.base.js';

// The platform modules are entries of their own: package.json picks one by export condition
// (`#platform` internally, `@payhook/core/adapter`'s Node half for adapters), so no build carries both.
const library = packageBuild(
  {
    index: 'src/index.ts',
    node: 'src/node.ts',
    adapter: 'src/adapter.ts',
    'adapter-node': 'src/adapter-node.ts',
    api: 'src/api.ts',
    otel: 'src/otel.ts',
    queue: 'src/queue.ts',
    store: 'src/store.ts',
    lifecycle: 'src/lifecycle.ts',
    verify: 'src/verify.ts',
    'platform/node-apis': 'src/platform/node-apis.ts',
    'platform/web-apis': 'src/platform/web-apis.ts',
  },
  {
    external: ['#platform'],
    // The command's build below runs beside this one: leave its output alone.
    clean: ['!cli.js', '!cli.js.map'],
    // Types only: `#platform` has the same type under every condition. Not in tsconfig.json, whose
    // paths bundlers (esbuild, wrangler) would apply to dist/ when it is reached through a workspace link.
    dts: { compilerOptions: { paths: { '#platform': ['./src/platform/node-apis.ts'] } } },
  },
);

// The `payhook` command (bin/payhook.mjs): Node only, ESM only, no types.
const cli = packageBuild({ cli: 'src/cli/cli.ts' }, { format: ['esm'], dts: false, clean: false, external: ['#platform'] });

export default [library, cli];
