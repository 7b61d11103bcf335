// What git says about the project, for `resume`: branch, how many files differ from HEAD (the
// working tree and index, untracked files included) and the last three commits. Read-only; null
// when the project root is not inside a git work tree or git is not installed.
import { execFileSync } from 'node:child_process';

export interface GitFacts {
  branch: string;
  changed_files: number;
  last_commits: { oid: string; subject: string }[];
}

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000, maxBuffer: 64 << 20 });
  } catch {
    return null;
  }
}

export function gitFacts(root: string): GitFacts | null {
  if (git(root, ['rev-parse', '--is-inside-work-tree'])?.trim() !== 'true') return null;
  // symbolic-ref names the branch even before the first commit; a detached HEAD has none.
  const sym = git(root, ['symbolic-ref', '--quiet', '--short', 'HEAD'])?.trim();
  const short = git(root, ['rev-parse', '--short', 'HEAD'])?.trim();
  const branch = sym || (short ? `(detached at ${short})` : '(unknown)');
  const status = git(root, ['status', '--porcelain=v1', '-z', '--untracked-files=all']) ?? '';
  // -z: entries end with NUL; a rename carries its old path as one more NUL-ended field.
  let changed = 0;
  const fields = status.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.length < 4) continue;
    changed++;
    if (f[0] === 'R' || f[0] === 'C') i++;
  }
  const log = git(root, ['log', '-3', '--format=%h%x09%s']) ?? '';
  const last_commits = log.split('\n').filter(Boolean).map((l) => {
    const tab = l.indexOf('\t');
    return { oid: l.slice(0, tab), subject: l.slice(tab + 1) };
  });
  return { branch, changed_files: changed, last_commits };
}
