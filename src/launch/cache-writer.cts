// Writing a code cache beside the bundle (bundle-loader.cts writeCache), by the durable recipe
// (src/fs/durable.ts). A file of its own, dist/cli/cache-writer.cjs, loaded only at that rare
// write: bundled into the launcher, the recipe and the file seam it writes through were source
// that Node compiled at every start, without a cache (about 3M instructions of every verb, 4%
// of `node -e ''`, for issue 26's gate and issue 22's field targets).
import { replaceFileDurable } from '../fs/durable.js';
import { realFileOps } from '../fs/ops.js';

/** Replaces `<dir>/<name>.cache` with `bytes`, whole or not at all; throws if it cannot. */
export function writeCacheFile(dir: string, name: string, bytes: Buffer): void {
  replaceFileDurable(realFileOps, dir, `${name}.cache`, bytes);
}
