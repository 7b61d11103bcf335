// Whether a project's git remotes hold a ledger (issue 25 items 4 and 5): `init` refuses a second
// genesis there, and `doctor` fails a ledger that is not joined to the one a remote holds.
// Policy: the remotes are asked by URL from a neutral folder with git's scrubbed environment
// (./git.ts: no prompt, ssh in batch mode, no hooks), so the project's own git config (a hostile
// repository's) chooses nothing but the URL; each within 10 s; one that does not answer says
// nothing (the trust file's word, project/init.ts, stands alone).
import { runGit as runProjectGit } from '../project/git.js';
import { runGit } from './git.js';
import { resolveRemoteUrl } from './sync.js';

function remoteNames(root: string): string[] {
  const r = runProjectGit(root, ['remote']);
  return r.code === 0 ? r.stdout.split('\n').map((l) => l.trim()).filter((l) => /^[A-Za-z0-9._-]+$/.test(l)) : [];
}

/** A remote's URL as a join would take it (sync.ts resolveRemoteUrl), or null when it has none usable. */
function remoteUrl(root: string, name: string): string | null {
  try {
    const url = resolveRemoteUrl(name, root);
    // Never a word git would read as a flag, nor one with spaces.
    return url.startsWith('-') || /\s/.test(url) ? null : url;
  } catch {
    return null;
  }
}

/** The first git remote of the project at `root` whose ref holds a ledger, or null. */
export function remoteHoldingLedger(root: string): { name: string; url: string } | null {
  // node:os only now: `ledger append` loads this module's importers and never needs it.
  const neutral = process.getBuiltinModule('node:os').tmpdir();
  for (const name of remoteNames(root)) {
    const url = remoteUrl(root, name);
    if (url === null) continue;
    const r = runGit(['-c', 'protocol.version=0', 'ls-remote', '--refs', '--', url, 'refs/handoff/ledger', 'refs/heads/handoff-ledger'], { cwd: neutral, timeoutMs: 10_000 });
    if (r.status === 0 && /\trefs\/(handoff\/ledger|heads\/handoff-ledger)\n?/.test(r.stdout.toString('utf8'))) return { name, url };
  }
  return null;
}

/** The remote a teammate most likely joins through: origin, else the only one; null when unclear. */
export function likelyRemote(root: string): string | null {
  const names = remoteNames(root);
  return names.includes('origin') ? 'origin' : names.length === 1 ? names[0] : null;
}
