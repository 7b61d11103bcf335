// What `ledger init` notices of a local install into a project (issue 26, item 8): a
// `node_modules/` that git neither tracks nor ignores. An untracked file makes the work tree
// unclean, so a gate on `git:` evidence holds, and `git add -A` would commit thousands of files.
// Read-only: git is asked (scrubbed environment, project/git.ts), nothing is written.
import { runGit } from './git.js';

/** The warning for an untracked, unignored `node_modules/` in the work tree at `root`, or null. */
export function untrackedNodeModules(root: string): string | null {
  const r = runGit(root, ['-c', 'core.fsmonitor=false', 'ls-files', '-z', '--others', '--exclude-standard', '--directory', '--', 'node_modules']);
  if (r.code !== 0 || !r.stdout.split('\0').includes('node_modules/')) return null;
  return 'node_modules/ is untracked and git does not ignore it (a local install leaves it): add `node_modules/` to .gitignore, or install globally (README "Install"); an untracked file holds a gate on git: evidence';
}
