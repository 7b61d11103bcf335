// Speed (issue 14: `start`, `checkpoint`, `resume`, `status` <= 1.5x `node -e ''`): the yaml
// library, loaded on first use and only by what renders HANDOFF.yml (about 30 ms to load from
// node_modules; `resume` and `status` use the views' shapers without writing any YAML). Under
// the shipped CLI it comes from the CLI's own bundle of it with a code cache
// (src/launch/bundle-loader.cts installLibraries); anywhere else, from node_modules.
import { createRequire } from 'node:module';

/** What the views use of yaml: all the CLI's own bundle of it holds (src/launch/build.mjs), with the package's version. */
export type CliYaml = Pick<typeof import('yaml'), 'Document' | 'visit' | 'isScalar'> & { version?: string };
let lib: CliYaml | null = null;

export function yamlLib(): CliYaml {
  if (lib === null) {
    const hook = (globalThis as { __handoffLedgerLibrary?: (name: string) => unknown }).__handoffLedgerLibrary;
    lib = ((hook && hook('yaml')) ?? createRequire(import.meta.url)('yaml')) as CliYaml;
  }
  return lib;
}
