import { packageBuild } from '../../tsup.base.js';

const library = packageBuild(['src/index.ts'], { clean: ['!cli.js', '!cli.js.map'] });

// The `payhook-reference` command (bin/payhook-reference.mjs): Node only, ESM only, no types.
const cli = packageBuild({ cli: 'src/cli.ts' }, { format: ['esm'], dts: false, clean: false });

export default [library, cli];
