// A FileOps over the real disk that, just before each 'wx' open, plants a symbolic link at exactly
// the path being opened: what an attacker who can write the directory and guess the name would do.
import { symlinkSync } from 'node:fs';
import { realFileOps, type FileOps, type OpenFlags } from '../../src/fs/ops.js';

/** The real disk with a link to `to` planted at each 'wx' path; `opens` lists those paths. */
export function plantingLinks(to: string): { ops: FileOps; opens: string[] } {
  const opens: string[] = [];
  const ops: FileOps = {
    ...realFileOps,
    open: (p: string, flags: OpenFlags, mode?: number) => {
      if (flags === 'wx') {
        opens.push(p);
        symlinkSync(to, p);
      }
      return realFileOps.open(p, flags, mode);
    },
  };
  return { ops, opens };
}
