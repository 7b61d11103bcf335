// `ledger doctor`: looks at a deployment the way an operator would and says what to fix. Every
// check is read-only. A check reports ok, warn (works, but worth fixing) or fail (the ledger, or
// a consumer's audit, will refuse something until it is fixed), each with the fix in one line.
// The git checks ask the real git (git.ts), read-only.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fromBase64url } from '../canonical.js';
import { publicKeyProblem } from '../ed25519-reference.js';
import { parseTrust, trustEntry, type Trust } from '../keys/trust.js';
import { acceptProblem, authorizeCommand, hasAdmin, pinOf, type Grants } from '../keys/grants.js';
import { foldGrants, keyRecords, type KeyRecordAt } from '../store/grants.js';
import type { Head } from '../record.js';
import { readSecretKey } from '../keys/key-file.js';
import { LedgerError } from '../errors.js';
import { createSigner } from '../sign.js';
import { realFileOps } from '../fs/ops.js';
import { readHead } from '../store/head.js';
import { ledgerPaths } from '../store/paths.js';
import { assertTailIsLastLine, readRecords } from '../store/read.js';
import { noLedgerHint } from '../store/append.js';
import { gitExposures } from './git-ignore.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';
export interface DoctorCheck { name: string; status: CheckStatus; detail: string; fix?: string }
export interface DoctorReport { ok: boolean; checks: DoctorCheck[] }

export interface DoctorOptions {
  dir: string;
  keyPath: string;
  trustPath: string;
  /** The agent that will write (--agent / LEDGER_AGENT), if known: the key must may sign for it. */
  agent?: string;
  /** Where the views live; null to skip the views check. */
  viewsDir: string | null;
  /** Compares the views with the ledger (the handoff module's check), injected to keep this file light. */
  checkViews?: (ledgerDir: string, viewsDir: string) => { views: { file: string; status: string }[] };
  /** The remote's checks (src/remote/doctor-checks.ts), injected to keep this file light. */
  checkRemote?: (ledgerDir: string, localSeq: number | null) => DoctorCheck[];
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

function checkKey(o: DoctorOptions, checks: DoctorCheck[]): string | null {
  if (!existsSync(o.keyPath)) {
    checks.push({ name: 'key file', status: 'warn', detail: `no secret key at ${o.keyPath}: this machine cannot write to the ledger`, fix: `restore the key file if it was moved (or pass --key / set LEDGER_KEY); a new key (\`ledger keygen --out ${o.keyPath}\`) writes only once an admin authorizes it (\`ledger trust add\`) or the trust file pins it` });
    return null;
  }
  try {
    // The writers' own read (keys/key-file.ts): a regular file, never waited on, this user's
    // or root's, 0600, in a folder no one else may write (StrictModes, issue 23).
    const { seed, name } = readSecretKey(o.keyPath);
    const publicKey = createSigner(seed).publicKey;
    checks.push({ name: 'key file', status: 'ok', detail: `${o.keyPath} (mode 0600), key "${name}" ${publicKey}` });
    return publicKey;
  } catch (e) {
    const insecure = e instanceof LedgerError && e.code === 'OP_INSECURE_KEY';
    checks.push({ name: 'key file', status: 'fail', detail: `${message(e)}${insecure ? ', so every writer refuses it' : ''}`, fix: insecure && e.hint ? e.hint : 'restore the key file from the harness, or create a new key and pin it' });
    return null;
  }
}

function checkTrust(o: DoctorOptions, checks: DoctorCheck[]): Trust | null {
  let trust: Trust;
  try {
    trust = parseTrust(readFileSync(o.trustPath, 'utf8'), o.trustPath);
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    checks.push({ name: 'trust file', status: 'fail', detail: missing ? `no trust file at ${o.trustPath}: \`ledger audit\` and \`ledger gate\` cannot run` : message(e), fix: missing ? 'pass --trust or set LEDGER_TRUST to the harness\'s trust file' : 'fix the trust file as the reason says' });
    return null;
  }
  // The deep key checks the trust parser leaves out (src/keys/trust.ts, Policy).
  const bad = trust.keys.map((k) => [k, publicKeyProblem(fromBase64url(k.key, 32)!)] as const).filter(([, p]) => p);
  if (bad.length) {
    for (const [k, p] of bad) checks.push({ name: 'trust file', status: 'fail', detail: `key "${k.name}" is ${p}: no signature can verify under it`, fix: `remove key "${k.name}" from ${o.trustPath} and pin a key made by \`ledger keygen\`` });
  } else checks.push({ name: 'trust file', status: 'ok', detail: `${o.trustPath}: ${trust.keys.length} key${trust.keys.length === 1 ? '' : 's'} pinned` });
  if (o.trustPath.startsWith(ledgerPaths(o.dir).dir + '/')) {
    checks.push({ name: 'trust file', status: 'warn', detail: 'the trust file lies inside the ledger directory: whoever can rewrite the ledger can rewrite the keys that vouch for it', fix: 'keep the trust file where the harness owns it, outside the ledger directory' });
  }
  return trust;
}

function checkLedger(o: DoctorOptions, checks: DoctorCheck[]): Head | null {
  const paths = ledgerPaths(o.dir);
  let head: Head | null;
  try {
    head = readHead(realFileOps, paths);
  } catch (e) {
    checks.push({ name: 'HEAD', status: 'fail', detail: message(e), fix: 'run `ledger audit` to see which layer fails' });
    return null;
  }
  if (!head) {
    checks.push({ name: 'HEAD', status: 'fail', detail: `no ledger at ${paths.dir}`, fix: noLedgerHint(paths) });
    return null;
  }
  let size = 0;
  try {
    size = statSync(paths.records).size;
  } catch {
    size = 0;
  }
  if (size < head.size) {
    checks.push({ name: 'records', status: 'fail', detail: `records.jsonl has ${size} bytes but HEAD publishes ${head.size}: published records are missing`, fix: 'restore records.jsonl from a copy; run `ledger audit`' });
    return head;
  }
  try {
    assertTailIsLastLine(realFileOps, paths, head);
    checks.push({ name: 'HEAD', status: 'ok', detail: `seq ${head.seq}, signed, and its tail is the last published line` });
  } catch (e) {
    checks.push({ name: 'HEAD', status: 'fail', detail: message(e), fix: 'run `ledger audit` to see which layer fails' });
  }
  if (size > head.size) {
    checks.push({ name: 'unpublished bytes', status: 'warn', detail: `${size - head.size} bytes past HEAD were never published (a torn write)`, fix: 'run `ledger recover` (the next append also moves them to quarantine/)' });
  } else checks.push({ name: 'unpublished bytes', status: 'ok', detail: 'none past HEAD' });
  return head;
}

function checkPins(o: DoctorOptions, checks: DoctorCheck[], trust: Trust, head: Head | null, signingKey: string | null): void {
  const paths = ledgerPaths(o.dir);
  // SPEC 7: keys an admin's `key` record authorized count beside the pins.
  let grants: Grants | null = null;
  let records: KeyRecordAt[] = [];
  if (head) {
    try {
      records = keyRecords(realFileOps, paths, head);
      grants = foldGrants(trust, records);
    } catch (e) {
      checks.push({ name: 'key records', status: 'fail', detail: message(e), fix: 'run `ledger audit` to see which layer fails' });
    }
    if (records.length) checks.push({ name: 'key records', status: 'ok', detail: `${grants?.size ?? 0} key${grants?.size === 1 ? '' : 's'} authorized in the ledger by admin key records (\`ledger trust list\`)` });
    const p = acceptProblem(trust, grants, head.sig.key, head.seq, null);
    if (p) checks.push({ name: 'HEAD key pinned', status: 'fail', detail: `HEAD is signed by a key the trust file does not accept: ${p}`, fix: 'run `ledger audit`; pin the harness key or find who wrote HEAD' });
    else checks.push({ name: 'HEAD key pinned', status: 'ok', detail: 'the key that signed HEAD is pinned or authorized' });
  }
  if (signingKey) {
    const next = head ? head.seq + 1 : 0;
    const agent = o.agent ?? null;
    const p = acceptProblem(trust, grants, signingKey, next, agent);
    if (p) {
      // Issue 25 item 1: records this key already signed (by a writer from before the writer's
      // own check) need a pin from the first of them, or pasting the entry does not help.
      const first = head ? firstSignedBy(paths, head, signingKey) : null;
      const from = first ?? next;
      const entry = JSON.stringify(trustEntry('NAME', signingKey, from, agent ? { agents: [agent] } : {}));
      // A key never used is best authorized in the ledger by an admin (no trust-file commit);
      // the trust-file entry stays the way for a key that signed already, or with no admin.
      const viaAdmin = first === null && hasAdmin(trust) && !pinOf(trust, signingKey) && !grants?.has(signingKey);
      const fix = `if the key was moved or lost, restore it; else ${viaAdmin ? `an admin authorizes it: \`${authorizeCommand(signingKey, [agent ?? 'AGENT'])}\`, or ` : ''}add this entry to the trust file's "keys": ${entry}`;
      checks.push({ name: 'signing key pinned', status: 'fail', detail: `the next record (seq ${next}) signed with ${o.keyPath} would fail key-pin: ${p}${first !== null ? ` (it signed records from seq ${first} already)` : ''}`, fix });
    } else checks.push({ name: 'signing key pinned', status: 'ok', detail: `records this key signs from seq ${next} pass key-pin${o.agent ? ` for agent "${o.agent}"` : ''}` });
  }
}

/** The lowest seq of a record signed by `key`, or null (a scan; doctor only). */
function firstSignedBy(paths: ReturnType<typeof ledgerPaths>, head: Head, key: string): number | null {
  try {
    for (const r of readRecords(paths, head)) if (r.record.sig.key === key) return r.seq;
  } catch {
    /* a damaged chain: HEAD's check says so */
  }
  return null;
}

function checkLock(o: DoctorOptions, checks: DoctorCheck[]): void {
  const lock = ledgerPaths(o.dir).lock;
  if (!existsSync(lock)) return;
  let info: { pid?: number; host?: string; since?: string } = {};
  try {
    info = JSON.parse(readFileSync(lock, 'utf8'));
  } catch {
    /* unwritten lock */
  }
  let alive = true;
  if (info.host === process.getBuiltinModule('node:os').hostname() && Number.isSafeInteger(info.pid)) {
    try {
      process.kill(info.pid!, 0);
    } catch (e) {
      alive = (e as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  checks.push(alive
    ? { name: 'writer lock', status: 'warn', detail: `held by pid ${info.pid ?? '?'} on ${info.host ?? '?'} since ${info.since ?? '?'}`, fix: 'if that process is gone for good, the next writer on its host takes the lock over; on another host, stop it there' }
    : { name: 'writer lock', status: 'warn', detail: `left by pid ${info.pid} which is gone`, fix: 'nothing to do: the next writer takes it over' });
}

function checkViewFiles(o: DoctorOptions, checks: DoctorCheck[]): void {
  if (!o.viewsDir || !o.checkViews) return;
  const present = ['HANDOFF.md', 'HANDOFF.yml'].some((f) => existsSync(join(o.viewsDir!, f)));
  if (!present) return;
  try {
    const r = o.checkViews(o.dir, o.viewsDir);
    const off = r.views.filter((v) => v.status !== 'ok');
    if (off.length) checks.push({ name: 'views', status: 'warn', detail: off.map((v) => `${v.file} is ${v.status}`).join('; '), fix: 'run `ledger render` (hand edits are overwritten: views are written only from the ledger)' });
    else checks.push({ name: 'views', status: 'ok', detail: 'HANDOFF.md and HANDOFF.yml match the ledger' });
  } catch (e) {
    checks.push({ name: 'views', status: 'warn', detail: message(e), fix: 'run `ledger render`' });
  }
}

/**
 * Whether git would take the secret key or the ledger (issue 14.2). Policy: a key that git
 * tracks, or would commit on the next `git add -A`, fails (exit 3): one push publishes the secret
 * that every signature rests on; so does a git that cannot say (fail closed). A ledger directory
 * in git is a warning: it leaks nothing secret, but a committed ledger gives merge conflicts
 * nobody can resolve, and `git checkout` of an older commit rolls it back (README "Using it with
 * git").
 */
function checkGit(o: DoctorOptions, checks: DoctorCheck[]): void {
  const hasKey = existsSync(o.keyPath);
  const hasDir = existsSync(o.dir);
  // One question to git for both paths (src/project/git-ignore.ts gitExposures).
  const asked = gitExposures([...(hasKey ? [{ path: o.keyPath, isDir: false }] : []), ...(hasDir ? [{ path: o.dir, isDir: true }] : [])]);
  if (hasKey) {
    const e = asked[0];
    const name = 'key in git';
    if (e.state === 'outside') checks.push({ name, status: 'ok', detail: `${o.keyPath} is outside every git work tree` });
    else if (e.state === 'unknown') checks.push({ name, status: 'fail', detail: `cannot tell whether git would commit the secret key ${o.keyPath}: ${e.why}`, fix: 'fix git (or install it), or keep the key outside the work tree' });
    else if (e.tracked) checks.push({ name, status: 'fail', detail: `git tracks the secret key ${e.rel} (in ${e.top}): its secret is in the repository's history`, fix: `\`git rm --cached ${e.rel}\` and commit; then make a new key (\`ledger keygen\`), pin it, and revoke the old one in the trust file` });
    else if (!e.ignored) checks.push({ name, status: 'fail', detail: `git would commit the secret key ${e.rel} (in ${e.top}) on the next \`git add -A\`: it is neither tracked nor ignored`, fix: `add ${ignoreLine(e.rel, false)} to ${e.top}/.gitignore (the line \`ledger init\` writes)` });
    else checks.push({ name, status: 'ok', detail: `git ignores ${e.rel}` });
  }
  if (hasDir) {
    const e = asked[hasKey ? 1 : 0];
    const name = 'ledger in git';
    if (e.state === 'outside') return;
    if (e.state === 'unknown') checks.push({ name, status: 'warn', detail: `cannot tell whether git tracks ${o.dir}: ${e.why}`, fix: 'fix git (or install it)' });
    else if (e.tracked) checks.push({ name, status: 'warn', detail: `git tracks files in ${e.rel}/: a committed ledger gives merge conflicts nobody can resolve, and \`git checkout\` rolls it back`, fix: `\`git rm -r --cached ${e.rel}\`, add ${ignoreLine(e.rel, true)} to ${e.top}/.gitignore and commit (README "Using it with git")` });
    else if (!e.ignored) checks.push({ name, status: 'warn', detail: `git would commit ${e.rel}/ on the next \`git add -A\`: it is neither tracked nor ignored`, fix: `add ${ignoreLine(e.rel, true)} to ${e.top}/.gitignore (the line \`ledger init\` writes)` });
    else checks.push({ name, status: 'ok', detail: `git ignores ${e.rel}/` });
  }
}

/** The line to suggest (not written: doctor is read-only). */
function ignoreLine(rel: string, isDir: boolean): string {
  if (isDir) return `/${rel}/`;
  const slash = rel.lastIndexOf('/');
  return rel.endsWith('.key') ? `/${slash < 0 ? '' : rel.slice(0, slash + 1)}*.key` : `/${rel}`;
}

export function runDoctor(o: DoctorOptions): DoctorReport {
  const checks: DoctorCheck[] = [];
  const signingKey = checkKey(o, checks);
  const trust = checkTrust(o, checks);
  const head = checkLedger(o, checks);
  if (trust) checkPins(o, checks, trust, head, signingKey);
  checkGit(o, checks);
  checkLock(o, checks);
  checkViewFiles(o, checks);
  if (o.checkRemote) checks.push(...o.checkRemote(o.dir, head ? head.seq : null));
  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}
