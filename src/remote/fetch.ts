// Fetching `refs/handoff/ledger` (SPEC 11) into the private repository and verifying what is
// new: from a point this machine already trusts (its anchor, or its own local copy), every new
// record's bytes, link, signature and key pin, and the fetched HEAD over them. The fetched ref
// is attacker-controlled input: nothing of it reaches the local copy before this passes.
import { idFromLine } from '../canonical.js';
import { LedgerError, type ErrorCode } from '../errors.js';
import { pinProblem, type Trust } from '../keys/trust.js';
import { acceptProblem, applyKeyRecord, keyRecordProblem, pinOf } from '../keys/grants.js';
import { foldGrants, type KeyRecordAt } from '../store/grants.js';
import { MAX_LINE_BYTES, headProblems, type Head, type LedgerRecord } from '../record.js';
import { LineProblem, canonicalValue, decodeRecordLine, type LineProblemKind } from '../record-line.js';
import { verifySig, type KeyMemo } from '../sign.js';
import { checkRemoteUrl, gitComplaint, gitOk, NETWORK_TIMEOUT_MS, runGit } from './git.js';
import { join } from 'node:path';
import { realFileOps } from '../fs/ops.js';
import { FETCHED_REF } from './state.js';
import { publishedCheckpoint } from './checkpoint.js';
import type { PublishedCheckpoint } from '../store/checkpoint.js';
import { readBlobsById, readShapeAndBlobs, recordOids, recordPath, VerifiedCommitMissing, type VerifiedBelow } from './tree.js';

/** SPEC 10: the audit's default clock skew. */
const SKEW_MS = 5 * 60_000;

export function unreachable(url: string, why: string): LedgerError {
  return new LedgerError('OP_REMOTE_UNREACHABLE', `the remote ${url} cannot be reached (${why}); nothing was changed`, { url }, 'check the network and the remote, or pass --offline to queue the write (it is not published until `ledger sync`)');
}

/** Makes the private bare repository once. Its config is ours: nothing in it comes from the repository or the remote. */
export function ensureRepo(repo: string): void {
  // A file check first: this runs before every write, and a git process costs milliseconds.
  if (realFileOps.exists(join(repo, 'HEAD')) && realFileOps.exists(join(repo, 'objects'))) return;
  gitOk(['init', '--bare', '--quiet', repo], {});
}

/**
 * Fetches the ref into FETCHED_REF; returns the fetched commit, or null when the remote has no
 * such ref. An unreachable remote throws OP_REMOTE_UNREACHABLE (exit 3).
 */
export function fetchLedgerRef(repo: string, url: string, ref: string, known: string | null = null, moved = false, deadline?: number): string | null {
  // SPEC 11 (a current read): each network call gets what is left of the caller's budget.
  const timeoutMs = () => (deadline === undefined ? NETWORK_TIMEOUT_MS : Math.max(1, deadline - Date.now()));
  if (moved) {
    // The remote just refused our lease (the ref moved): it almost surely has commits we lack,
    // so one fetch (one connection: the ref's value and its objects) instead of ls-remote and
    // then a fetch. A failed fetch (the ref gone, or no answer) is told apart by the ls-remote below.
    const f = fetchRef(repo, url, ref, timeoutMs());
    if (f.status === 0) return gitOk(['rev-parse', '--verify', `${FETCHED_REF}^{commit}`], { gitDir: repo }).toString('utf8').trim();
  }
  // One round trip says whether the ref is there and where; a fetch only when we lack it.
  // Policy: ls-remote speaks protocol v0. Its pattern matches ref names by their end, so git
  // sends v2 no ref-prefix and the server lists the same refs either way; v2 only adds a round
  // trip (capabilities first, then the ls-refs command, which over git:// also waits out a
  // delayed ACK: about 40 ms of a 50 ms ls-remote here). Fetches too (fetchRef).
  const ls = runGit(['-c', 'protocol.version=0', 'ls-remote', '--refs', '--', checkRemoteUrl(url), ref], { gitDir: repo, timeoutMs: timeoutMs() });
  if (ls.status !== 0) throw unreachable(url, gitComplaint(ls));
  const line = ls.stdout.toString('utf8').split('\n').find((l) => l.endsWith(`\t${ref}`));
  if (!line) return null;
  const tip = line.split('\t')[0];
  // Attacker-controlled: the remote names the commit. Only an object id goes on to git's argv.
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(tip)) throw new LedgerError('REMOTE_SCHEMA', `the remote named ${ref} with something that is not an object id`, { url });
  // The commit this machine verified last (the anchor's, kept under FETCHED_REF): nothing to fetch.
  if (tip === known) return tip;
  const have = runGit(['cat-file', '-e', `${tip}^{commit}`], { gitDir: repo });
  if (have.status !== 0) {
    const f = fetchRef(repo, url, ref, timeoutMs());
    if (f.status !== 0) throw unreachable(url, gitComplaint(f));
    const got = gitOk(['rev-parse', '--verify', `${FETCHED_REF}^{commit}`], { gitDir: repo }).toString('utf8').trim();
    return got;
  }
  gitOk(['update-ref', FETCHED_REF, tip], { gitDir: repo });
  return tip;
}

/**
 * Fetches the ref into FETCHED_REF. Policy: protocol v0, as ls-remote above. v2 spends a round
 * trip more (the capabilities, then ls-refs, then fetch), each waiting out a delayed ACK over
 * git://: a fetch of one new commit from the local daemon took 112 ms in v2, 74 ms in v0
 * (medians of 15, twice), and a loser of a race fetches on every attempt. What v0 costs is the
 * advertisement of all the remote's refs (v2's ref-prefix narrows it), which every ls-remote
 * of a write already receives; a remote with very many refs pays it once more per fetch.
 */
function fetchRef(repo: string, url: string, ref: string, timeoutMs = NETWORK_TIMEOUT_MS) {
  return runGit(['-c', 'protocol.version=0', 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', checkRemoteUrl(url), `+${ref}:${FETCHED_REF}`], { gitDir: repo, timeoutMs });
}

/** A point of the chain this machine trusts: a seq, its id and ts, and records.jsonl's size through it. */
export interface ChainPoint { seq: number; id: string; ts: string; size: number }

export interface VerifiedRemote {
  commit: string;
  head: Head;
  headBytes: Buffer;
  /** The record lines (with their newlines) after `from`, in seq order, through HEAD. */
  lines: Buffer[];
  /** The seq of lines[0]. */
  firstSeq: number;
  /** SPEC 13: the checkpoint of HEAD's whole tree the commit carries, signature checked (root: by the adopter); null: none. */
  checkpoint: PublishedCheckpoint | null;
}

/**
 * A record line this machine verified (verifyRemote) or wrote, its newline included, parsed as
 * such (record-line.ts `chained`): its ts and id. OP_CORRUPT if it is not one after all.
 */
export function verifiedLine(line: Buffer): { ts: string; id: string } {
  const got = decodeRecordLine(line[line.length - 1] === 0x0a ? line.subarray(0, -1) : line, { chained: true });
  if (got instanceof LineProblem) throw new LedgerError('OP_CORRUPT', `a record line read back ${got.why}`, { problem: got.kind });
  return { ts: got.record.ts, id: got.id };
}

/** A remote record line's problem (record-line.ts) as the remote's refusal: its form, or its place in the chain. */
const REMOTE_CODE: Record<LineProblemKind, ErrorCode> = {
  utf8: 'REMOTE_SCHEMA', json: 'REMOTE_SCHEMA', canonical: 'REMOTE_SCHEMA', schema: 'REMOTE_SCHEMA', seq: 'REMOTE_LINKAGE', link: 'REMOTE_LINKAGE', id: 'REMOTE_LINKAGE',
};

function refusal(code: ErrorCode, message: string, data: Record<string, unknown> = {}): LedgerError {
  return new LedgerError(code, message, data, 'nothing was changed; run `ledger doctor` and review the remote ref before anyone writes');
}

/**
 * A remote record or HEAD whose key this machine does not accept (SPEC 11, issue 25 item 5):
 * a key that is neither pinned nor authorized is most often a machine not yet authorized, so
 * the refusal says how an admin authorizes it, beside what to check if it is not.
 */
function notAccepted(where: string, why: string, key: string, agent: string | null, seq: number, commit: string, trust: Trust): LedgerError {
  const unknown = !pinOf(trust, key) && / nor authorized by /.test(why);
  const message = unknown ? `${where} is signed by key ${key}, which this machine does not accept: a machine not yet authorized (${why})` : `${where}: ${why}`;
  const hint = unknown
    ? `nothing was changed; if that key is a machine of your team, an admin authorizes it with \`ledger trust add ${key} --name NAME --agents ${agent ?? 'AGENT'} --reason TEXT\`; if nobody knows it, review the remote ref before anyone writes`
    : 'nothing was changed; run `ledger doctor` and review the remote ref before anyone writes';
  return new LedgerError('REMOTE_KEY_PIN', message, { seq, commit, key, onboarding: unknown }, hint);
}

function parseRemoteHead(bytes: Buffer | null, commit: string): Head {
  if (!bytes) throw refusal('REMOTE_SCHEMA', `the remote ledger commit ${commit.slice(0, 12)} has no HEAD blob`, { commit });
  // As the local HEAD (store/head.ts): canonical JSON and a newline, read as a record line is.
  const newline = bytes.length > 0 && bytes[bytes.length - 1] === 0x0a;
  const line = canonicalValue(newline ? bytes.subarray(0, -1) : bytes);
  if (line instanceof LineProblem && line.kind !== 'canonical') throw refusal('REMOTE_SCHEMA', `the remote HEAD ${line.why}`, { commit });
  const problems = line instanceof LineProblem ? [] : headProblems(line.value);
  if (problems.length || line instanceof LineProblem || !newline) {
    throw refusal('REMOTE_SCHEMA', `the remote HEAD is malformed (${problems[0] ?? 'not canonical JSON'})`, { commit });
  }
  const head = line.value as Head;
  if (!verifySig('head', idFromLine(line.text, head), head.sig)) throw refusal('REMOTE_SIGNATURE', 'the remote HEAD has a signature that does not verify', { commit });
  return head;
}

/**
 * Verifies the fetched commit from `from` (null: from genesis, when joining). `mustHold`: points
 * the ref must contain (the anchor; the local copy's tail): one it lacks is a fork (exit 11),
 * one past its HEAD a rollback (exit 14).
 */
export function verifyRemote(repo: string, commit: string, from: ChainPoint | null, mustHold: readonly { seq: number; id: string; what: string }[], trust: Trust, nowMs: number, sameLedger?: { genesis: string; what: string }, priorKeys: readonly KeyRecordAt[] = [], below: { verified: VerifiedBelow | null; known?: (seq: number) => string | null } = { verified: null }): VerifiedRemote {
  // Policy: the root must be exactly HEAD and records/ (and blobs/) and the commit at most one
  // parent; and records/ exactly one regular blob per record (tree.ts recordOids): an extra
  // entry, a link or a gitlink is refused, and everything through `below.verified` must be the
  // very objects this machine verified (issue 23 finding 7).
  // One git process reads the shape, HEAD and the blobs at the points the ref must hold; each is
  // looked at only in the order below (a blob read early decides nothing before its check).
  const shape = readShapeAndBlobs(repo, commit, ['HEAD', 'checkpoint', ...mustHold.map((p) => recordPath(p.seq))]);
  if (shape.parents.length > 1) throw refusal('REMOTE_LINKAGE', `the remote ledger commit ${commit.slice(0, 12)} is a merge; the ref must be a line`, { commit });
  // SPEC 11: the whole test output travels too (blobs.ts): a blobs/ folder may be beside them;
  // SPEC 13: and the checkpoint, a regular file (checkpoint.ts).
  const known = shape.root.filter((e) => e === 'blob:HEAD' || e === 'tree:records' || e === 'tree:blobs' || e === 'blob:checkpoint');
  if (known.length !== shape.root.length || !shape.root.includes('blob:HEAD') || !shape.root.includes('tree:records')) {
    throw refusal('REMOTE_SCHEMA', `the remote ledger commit ${commit.slice(0, 12)} holds ${shape.root.join(', ') || 'nothing'}, not exactly HEAD and records/ (and blobs/, checkpoint)`, { commit });
  }
  const [headBytes, checkpointBytes, ...held] = shape.blobs;
  const head = parseRemoteHead(headBytes, commit);
  if (shape.root.includes('blob:checkpoint') && checkpointBytes === null) throw refusal('REMOTE_SCHEMA', `the remote ledger commit ${commit.slice(0, 12)} has a checkpoint that is not a regular file`, { commit });
  const checkpoint = publishedCheckpoint(checkpointBytes, head, commit);
  // A HEAD signed by a pinned key is checked now; one signed by a key that a `key` record
  // authorized (SPEC 7), once the records through it are folded, below.
  const pinHead = pinOf(trust, head.sig.key) ? pinProblem(trust, head.sig.key, head.seq, null) : null;
  if (pinHead) throw refusal('REMOTE_KEY_PIN', `the remote HEAD: ${pinHead}`, { commit });

  // Another ledger altogether (its HEAD names another genesis) is a fork, whatever its seq: said
  // so before the seq is compared, so a shorter foreign ledger is not called a rollback. Only
  // the refusal's name depends on it: either way nothing is taken.
  if (sameLedger && head.genesis !== sameLedger.genesis) {
    throw new LedgerError('REMOTE_LINKAGE', `fork: the remote holds another ledger than ${sameLedger.what} (genesis ${head.genesis.slice(0, 19)}…, not ${sameLedger.genesis.slice(0, 19)}…)`, { kind: 'fork', commit });
  }
  // The anchor and the local copy first: a ref below them is a rollback, one without them a fork.
  for (const p of mustHold) {
    if (head.seq < p.seq) {
      throw new LedgerError('REMOTE_FRESHNESS', `rollback: the remote ledger is at seq ${head.seq}, below ${p.what} at seq ${p.seq}`, { kind: 'rollback', remote_seq: head.seq, seq: p.seq, commit });
    }
  }
  mustHold.forEach((p, i) => {
    const line = held[i];
    const got = line && line.length > 1 && line[line.length - 1] === 0x0a ? decodeRecordLine(line.subarray(0, -1), { seq: p.seq }) : null;
    const id = got === null || got instanceof LineProblem ? null : got.id;
    if (id !== p.id) {
      throw new LedgerError('REMOTE_LINKAGE', `fork: the remote ledger does not hold ${p.what}'s record at seq ${p.seq} (${p.id.slice(0, 15)}…)`, { kind: 'fork', seq: p.seq, expected: p.id, actual: id, commit });
    }
  });

  if (from && head.seq < from.seq) throw new LedgerError('REMOTE_FRESHNESS', `rollback: the remote ledger is at seq ${head.seq}, below seq ${from.seq}`, { kind: 'rollback', commit });
  let oids: string[];
  try {
    oids = recordOids(repo, commit, head.seq, from ? from.seq : -1, below.verified, below.known);
  } catch (e) {
    if (!(e instanceof VerifiedCommitMissing)) throw e;
    // Policy: the anchor's commit is gone from the private repository (made anew): everything
    // is read and verified from genesis instead, the points it must hold still held.
    from = null;
    oids = recordOids(repo, commit, head.seq, -1, null);
  }
  const firstSeq = from ? from.seq + 1 : 0;
  const seqs = Array.from({ length: oids.length }, (_, i) => firstSeq + i);
  const blobs = readBlobsById(repo, commit, oids);
  const { lines, prev, size, genesis, grants } = verifyLines(blobs, seqs, from, trust, nowMs, 'the remote record', { commit }, priorKeys);
  const latest = nowMs + SKEW_MS;
  if (!pinOf(trust, head.sig.key)) {
    const why = acceptProblem(trust, grants, head.sig.key, head.seq, null);
    if (why) throw notAccepted('the remote HEAD', why, head.sig.key, null, head.seq, commit, trust);
  }
  if (genesis !== null && head.genesis !== genesis) throw refusal('REMOTE_LINKAGE', 'the remote HEAD names another genesis than its records', { commit });
  if (head.tail !== prev.id || head.size !== size) throw refusal('REMOTE_LINKAGE', `the remote HEAD (seq ${head.seq}, size ${head.size}) does not match its records (size ${size})`, { commit });
  if (Date.parse(head.ts) < Date.parse(prev.ts!) || Date.parse(head.ts) > latest) throw refusal('REMOTE_FRESHNESS', 'the remote HEAD is dated before its tail or in the future', { commit });
  return { commit, head, headBytes: headBytes!, lines, firstSeq, checkpoint };
}

/**
 * Every line's bytes, link, signature, key pin (the trust file's, and the keys `key` records
 * authorized: SPEC 7) and time, in seq order from `from` (null: from genesis): what a remote's
 * new records must pass, and what a join checks of a local copy before it publishes it (a join
 * never publishes what its own trust rejects). `what` names a line in refusals ("the remote
 * record"); `data` goes into each. Returns the keys authorized through the last line too.
 */
export function verifyLines(blobs: readonly (Buffer | null)[], seqs: readonly number[], from: ChainPoint | null, trust: Trust, nowMs: number, what: string, data: { commit?: string }, priorKeys: readonly KeyRecordAt[] = []) {
  const commit = data.commit ?? '';
  const firstSeq = seqs.length ? seqs[0] : from ? from.seq + 1 : 0;
  let prev: { seq: number; id: string | null; ts: string | null } = from ? { seq: from.seq, id: from.id, ts: from.ts } : { seq: -1, id: null, ts: null };
  let size = from ? from.size : 0;
  let genesis: string | null = null;
  const latest = nowMs + SKEW_MS;
  const lines: Buffer[] = [];
  // This verification's key objects (sign.ts KeyMemo: a ledger has few keys), dropped with it.
  const keys: KeyMemo = new Map();
  // SPEC 7: the keys records authorized, through the point verified from (the local copy's own
  // key records, checked there), then folded record by record.
  const grants = foldGrants(trust, priorKeys.filter((k) => k.seq < firstSeq));
  blobs.forEach((blob, i) => {
    const seq = seqs[i];
    const where = `${what} at seq ${seq}`;
    if (!blob) throw refusal('REMOTE_LINKAGE', `${where} is missing from the tree`, { seq, commit });
    if (blob.length > MAX_LINE_BYTES + 1 || blob[blob.length - 1] !== 0x0a) throw refusal('REMOTE_SCHEMA', `${where} is not one line`, { seq, commit });
    // SPEC 4: bytes, not a re-encoding (record-line.ts), and the record linked to the one before it.
    const got = decodeRecordLine(blob.subarray(0, -1), { seq, prev: prev.id, schema: true });
    if (got instanceof LineProblem) throw refusal(REMOTE_CODE[got.kind], `${where} ${got.why}`, { seq, commit });
    const { record: r, id } = got;
    if (seq === 0) {
      if (r.kind !== 'genesis') throw refusal('REMOTE_LINKAGE', `${what} at seq 0 is not a genesis record`, { commit });
      genesis = id;
    }
    if (!verifySig('record', id, r.sig, keys)) throw refusal('REMOTE_SIGNATURE', `${where} has a signature that does not verify`, { seq, commit });
    const pin = acceptProblem(trust, grants, r.sig.key, seq, r.agent);
    if (pin) throw notAccepted(where, pin, r.sig.key, r.agent, seq, commit, trust);
    if (r.kind === 'key') {
      const bad = keyRecordProblem(trust, grants, r as LedgerRecord<'key'>, seq);
      if (bad) throw refusal('REMOTE_KEY_PIN', bad.replace(/^the key record/, 'the remote key record'), { seq, commit });
      applyKeyRecord(trust, grants, r as LedgerRecord<'key'>, seq, id);
    }
    if (prev.ts !== null && Date.parse(r.ts) < Date.parse(prev.ts)) throw refusal('REMOTE_FRESHNESS', `${where} is earlier than the record before it`, { seq, commit });
    if (Date.parse(r.ts) > latest) throw refusal('REMOTE_FRESHNESS', `${where} is dated in the future (${r.ts})`, { seq, commit });
    prev = { seq, id, ts: r.ts };
    size += blob.length;
    lines.push(blob);
  });
  return { lines, prev, size, genesis, grants };
}
