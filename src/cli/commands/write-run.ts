// The writing verbs' implementation: init, keygen, append (one handoff or intent, or a batch
// from stdin), recover. Registered in write.ts.
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { LedgerError } from '../../errors.js';
import { assertReplaceable } from '../../fs/durable.js';
import { realFileOps } from '../../fs/ops.js';
import { parseJsonStrict } from '../../canonical.js';
import { readSecretKey, writeSecretKey } from '../../keys/key-file.js';
import { Ledger } from '../../ledger.js';
import { createSigner } from '../../sign.js';
import { KINDS, type Draft, type HandoffPayload, type IntentPayload } from '../../record.js';
import { KEY_NAME_RE } from '../../keys/secret-key.js';
import {
  agentName, emit, envValue, flag, guardOptions, keyPath, ledgerDir, many, maxChars, one, required, trustPath, waitMs,
  type CliIO, type Opts,
} from './common.js';
import { remoteOpts } from './remote-opts.js';
import { locateLedger, type LedgerLocation } from '../../project/locate.js';
import { LEDGER_DIR_NAME } from '../../store/discover.js';
import { parseEvidence, parseHandoffTail, parseId, parseOutcome } from './handoff-flags.js';
import { recordIdsIn } from '../ids.js';


/**
 * Where `init` creates the ledger: --dir or $LEDGER_DIR as named, else `.ledger` in the working
 * directory. Policy: without either, `init` refuses (exit 2) where the search of every other verb
 * would find a ledger (SPEC 3: a second one there would fork the project's log), and in a linked
 * git worktree, whose clone's ledger belongs beside the main worktree, where all its worktrees
 * find it (a ledger inside one worktree dies with it). --dir makes either one on purpose.
 */
function initTarget(io: CliIO, opts: Opts): LedgerLocation {
  const loc = locateLedger({ cwd: io.cwd, dir: one(opts, 'dir'), envDir: envValue(io, 'LEDGER_DIR') });
  // Policy: `init --remote` joins the ledger of this folder itself (`.ledger` here, the one every
  // verb run here uses) to a remote: that makes no second ledger, so the search's refusal does
  // not apply (src/remote/sync.ts joinLedger: publish it, or verify the remote's continuation of
  // it; a ledger already joined on this machine is refused there, "run `ledger sync`"). A ledger
  // found above this folder or beside the main worktree is still refused: join it from its root.
  const joiningHere = one(opts, 'remote') !== undefined && loc.source !== 'none' && loc.root === resolve(io.cwd) && loc.dir === resolve(io.cwd, LEDGER_DIR_NAME);
  if (loc.source === 'flag' || loc.source === 'env' || loc.source === 'none' || joiningHere) {
    if (loc.source === 'none' && loc.linkedWorktree) {
      const { top, main } = loc.linkedWorktree;
      throw new LedgerError('INPUT_REFUSED', `${top} is a linked git worktree of ${main}, and a clone's one ledger lives beside its main worktree`, { dir: loc.dir, main }, `run \`ledger init\` in ${main} (every worktree then finds it), or pass --dir to keep a separate ledger here`);
    }
    return loc;
  }
  const where = loc.root === resolve(io.cwd) ? '' : loc.source === 'main-worktree' ? ', beside the main worktree of this git worktree' : ', in a folder above this one';
  throw new LedgerError('INPUT_EXISTS', `a ledger already exists at ${loc.dir}${where}`, { dir: loc.dir }, where ? `every verb run inside ${loc.root} uses it; to start a separate ledger here on purpose, pass --dir ${LEDGER_DIR_NAME}` : '`ledger init` never overwrites a ledger: use another --dir');
}

export async function runInit(io: CliIO, opts: Opts): Promise<number> {
  const { dir, root } = initTarget(io, opts);
  const remote = one(opts, 'remote');
  // `init --remote` may join a ledger that exists here to a remote (remote-run.ts).
  if (existsSync(`${dir}/HEAD`) && remote === undefined) {
    throw new LedgerError('INPUT_EXISTS', `a ledger already exists at ${dir}`, {}, '`ledger init` never overwrites a ledger: use another --dir');
  }
  const name = one(opts, 'name');
  if (name !== undefined) maxChars(name, 'name', 128);
  const wait = waitMs(opts);
  const kp = keyPath(io, opts, root);
  const tp = trustPath(io, opts, root);
  // Everything that can refuse is checked before anything is written, so a refused init leaves
  // no key file behind: the existing key, the agent, and the trust file it would pin into.
  const existing = existsSync(kp) ? readSecretKey(kp) : null;
  const agent = agentName(io, opts, existing?.name ?? 'harness');
  const { pinKeyInTrustFile } = await import('./trust-edit.js');
  // A trust file that is a symbolic link is never followed or replaced (fs/durable.ts): refused
  // here, before the key file is made, not after.
  assertReplaceable(realFileOps, tp);
  if (existsSync(tp)) (await import('../../keys/trust-file.js')).readTrust(tp);
  // A join can still be refused after this (the remote's answer): what init writes before it is
  // noted, so a refused join puts it back (remote-run.ts undoRefusedJoin).
  const before = remote !== undefined ? (await import('./remote-run.js')).beforeJoin(kp, tp) : null;
  // In a git work tree, git is made to ignore the key and the ledger before either exists, so no
  // `git add -A` ever sees them (issue 14.2); a git that cannot say refuses the init here.
  const kept = (await import('../../project/git-ignore.js')).keepOutOfGit(kp, dir);
  let created = false;
  let key: { name: string; seed: Uint8Array };
  if (existing) key = existing;
  else {
    key = { name: 'harness', seed: new Uint8Array(randomBytes(32)) };
    writeSecretKey(kp, key.name, key.seed);
    created = true;
  }
  const signer = createSigner(key.seed);
  // The trust file is the harness's: pin a key we just created; warn about one we did not.
  const pinned = pinKeyInTrustFile(tp, key.name, signer.publicKey, created);
  if (remote !== undefined) {
    const { runJoin, undoRefusedJoin } = await import('./remote-run.js');
    try {
      return runJoin(io, opts, { dir, remote, signer, agent, name, waitMs: wait, trustPath: tp, keyPath: kp, created, pinned, gitignore: kept });
    } catch (e) {
      undoRefusedJoin(e, before!, { created, kept });
      throw e;
    }
  }
  const { result } = Ledger.init({ dir, key: signer, agent, name, waitMs: wait, trust: tp, env: io.env });
  const g = result.records[0];
  const lines = [`initialised ledger ${dir}`, `genesis ${g.id}`];
  if (created) lines.push(`created key ${kp} (mode 0600) and pinned it in ${tp}`);
  if (kept?.file) lines.push(`git ignores ${kept.added.join(' and ')} now (added to ${kept.file}): commit the trust file, never the key`);
  if (!pinned) io.stderr(`ledger: warning: key ${signer.publicKey} is not pinned in ${tp}; \`ledger audit\` will fail key-pin until the harness pins it\n`);
  for (const t of kept?.tracked ?? []) io.stderr(`ledger: warning: git already tracks ${t}; ignoring it does not take it out of git: \`git rm -r --cached ${t}\`${t === kp ? ', and make a new key, since its secret is in the history' : ''}\n`);
  emit(io, opts, { ok: true, dir, genesis: g.id, key: signer.publicKey, key_created: created, trust: tp, pinned, gitignore: kept ? { file: kept.file, added: kept.added, tracked: kept.tracked } : null }, lines);
  return 0;
}

export async function runKeygen(io: CliIO, opts: Opts): Promise<number> {
  const out = required(opts, 'out', 'where to write the new secret key');
  const name = one(opts, 'name') ?? 'harness';
  if (!KEY_NAME_RE.test(name)) throw new LedgerError('USAGE', `--name must be 1-64 chars of [A-Za-z0-9._@-], got "${name}"`);
  const seed = new Uint8Array(randomBytes(32));
  const target = resolve(io.cwd, out);
  writeSecretKey(target, name, seed);
  const { trustEntry } = await import('../../keys/trust.js');
  const entry = trustEntry(name, createSigner(seed).publicKey);
  emit(io, opts, { ok: true, out: target, entry }, [JSON.stringify(entry)]);
  if (!flag(opts, 'json')) io.stderr(`ledger: wrote ${target} (mode 0600); add the entry above to the trust file's "keys"\n`);
  return 0;
}

function handoffFromFlags(io: CliIO, opts: Opts, dir: string): HandoffPayload {
  const payload: HandoffPayload = {
    logical_operation_id: parseId(required(opts, 'op', 'the logical_operation_id'), 'op'),
    execution_id: parseId(required(opts, 'exec', 'the execution_id of this attempt'), 'exec'),
    outcome: parseOutcome(required(opts, 'outcome', 'success, failure, timeout, ambiguous or cancelled')),
    evidence: parseEvidence(many(opts, 'evidence'), { root: dirname(dir), ledgerDir: dir, cwd: io.cwd }),
    ...parseHandoffTail(opts, recordIdsIn(dir)),
  };
  return payload;
}

const HANDOFF_FLAGS = ['op', 'exec', 'outcome', 'evidence', 'invariant', 'dependsOn', 'supersedes', 'note', 'action'];
const INTENT_FLAGS = ['op', 'exec', 'action', 'note'];

function intentFromFlags(opts: Opts): IntentPayload {
  const stray = HANDOFF_FLAGS.find((f) => !INTENT_FLAGS.includes(f) && opts[f] !== undefined);
  if (stray) throw new LedgerError('USAGE', `--${stray.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())} does not apply to an intent (it takes --op, --exec, --action, --note)`);
  const action = maxChars(required(opts, 'action', 'the external side effect about to happen'), 'action', 1024);
  const payload: IntentPayload = {
    logical_operation_id: parseId(required(opts, 'op', 'the logical_operation_id'), 'op'),
    execution_id: parseId(required(opts, 'exec', 'the execution_id of this attempt'), 'exec'),
    action,
  };
  const note = one(opts, 'note');
  if (note !== undefined) {
    payload.note = maxChars(note, 'note', 4096);
  }
  return payload;
}

/** One line of batch input as JSON; a malformed one is bad input to this verb, not a bad file. */
function batchLine(line: string, n: number): unknown {
  try {
    return parseJsonStrict(line, `stdin line ${n}`);
  } catch (e) {
    if (e instanceof LedgerError) throw new LedgerError(e.code, e.message, e.data, 'see `ledger append --help`');
    throw e;
  }
}

/** The kinds a batch carries (docs/causal-handoffs.md "The kinds, and who writes them"); each other kind has its own verb. */
const BATCH_KINDS = ['handoff', 'intent', 'revoke'];

/**
 * Parses `append --batch` input: one JSON payload object per non-empty line, strictly.
 * `caller` is --agent (or $LEDGER_AGENT): who is writing. Policy (issue 13 finding 2): a payload
 * may name its agent only if that is the caller; without a caller, every payload names one and
 * the same agent (a batch is one writer's). Either way a refusal refuses the whole batch.
 * Policy: only handoff, intent and revoke: start, checkpoint, finish and every workflow kind go
 * through the workflow's rules or not at all (the library's append refuses them too).
 */
export function parseBatch(text: string, caller: string | undefined): Draft[] {
  const drafts: Draft[] = [];
  let named: { agent: unknown; line: number } | null = null;
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const n = i + 1;
    const value = batchLine(line, n);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new LedgerError('INPUT_SCHEMA', `stdin line ${n}: expected a JSON object payload with "kind"`);
    }
    const v = value as Record<string, unknown>;
    if (v.kind === 'genesis') throw new LedgerError('INPUT_SCHEMA', `stdin line ${n}: a genesis record is written only by \`ledger init\``);
    if (typeof v.kind === 'string' && !BATCH_KINDS.includes(v.kind) && (KINDS as readonly string[]).includes(v.kind)) {
      throw new LedgerError('INPUT_REFUSED', `stdin line ${n}: append --batch writes ${BATCH_KINDS.join(', ')} records; a ${v.kind} record is written only by \`ledger ${v.kind === 'consume' ? 'gate --consume-as' : v.kind.replace(/_/g, '-')}\`, with its rules`, { kind: v.kind, line: n });
    }
    if (Object.hasOwn(v, 'agent')) {
      if (caller !== undefined && v.agent !== caller) {
        throw new LedgerError('INPUT_REFUSED', `stdin line ${n}: the payload names agent ${JSON.stringify(v.agent)}, but the caller is "${caller}" (--agent or LEDGER_AGENT); a batch writes only as its caller`, { line: n, agent: v.agent, caller });
      }
      if (caller === undefined && named !== null && v.agent !== named.agent) {
        throw new LedgerError('INPUT_REFUSED', `stdin line ${n}: the payload names agent ${JSON.stringify(v.agent)}, but line ${named.line} names ${JSON.stringify(named.agent)}; a batch is one writer's (pass --agent)`, { line: n, agent: v.agent });
      }
      named ??= { agent: v.agent, line: n };
    } else if (caller === undefined) {
      throw new LedgerError('USAGE', `stdin line ${n}: no "agent" in the payload and no --agent or LEDGER_AGENT`);
    }
    // The object was parsed just now and is ours: fill in the agent rather than copy it.
    if (caller !== undefined) v.agent = caller;
    drafts.push(v as Draft);
  });
  if (drafts.length === 0) throw new LedgerError('INPUT_SCHEMA', 'append --batch read no payloads from stdin');
  return drafts;
}

export async function runAppend(io: CliIO, kind: string | undefined, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  if (flag(opts, 'batch')) {
    if (kind !== undefined) throw new LedgerError('USAGE', `append --batch takes no kind (each payload names its own), got "${kind}"`);
    const given = HANDOFF_FLAGS.filter((f) => opts[f] !== undefined);
    if (given.length) throw new LedgerError('USAGE', `append --batch reads payloads from stdin; --${given[0]} does not apply`);
    const agentFlag = one(opts, 'agent') ?? (io.env.LEDGER_AGENT || undefined);
    if (agentFlag !== undefined) agentName(io, opts);
    const drafts = parseBatch(await io.readStdin(), agentFlag);
    const ledger = Ledger.open({ dir, key: keyPath(io, opts), waitMs: waitMs(opts), ...guardOptions(io, opts), ...remoteOpts(io, opts) });
    // Retry identity (issue 4): identical retries of handoffs, intents and revocations in the
    // batch return the records that exist; the rest are appended under one lock and one HEAD.
    const res = ledger.append(drafts);
    if (res.recovered) io.stderr(`ledger: moved ${res.recovered.unpublished} unpublished bytes to ${res.recovered.file}\n`);
    const existing = res.records.filter((r) => r.existing).length;
    if (existing) io.stderr(`ledger: ${existing} of ${res.records.length} payloads were already recorded with identical content; appended ${res.appended}\n`);
    // A loop, not Math.min(...seqs): spreading 150,000 arguments overflows the stack (issue 14.7).
    const seqs = res.records.reduce((m, r) => ({ first: Math.min(m.first, r.seq), last: Math.max(m.last, r.seq) }), { first: Infinity, last: -Infinity });
    emit(io, opts, { ok: true, count: res.records.length, appended: res.appended, existing, first_seq: seqs.first, last_seq: seqs.last, ids: res.records.map((r) => r.id) }, res.records.map((r) => r.id));
    return 0;
  }
  if (kind === undefined) throw new LedgerError('USAGE', 'append needs a kind (`ledger append handoff ...`, `ledger append intent ...`) or --batch');
  if (kind !== 'handoff' && kind !== 'intent') throw new LedgerError('USAGE', `append writes "handoff" or "intent" records from flags (other kinds: --batch or their own verbs), got "${kind}"`);
  if (kind === 'handoff' && opts.action !== undefined) throw new LedgerError('USAGE', '--action applies to `append intent`, not to a handoff');
  const agent = agentName(io, opts);
  const payload = kind === 'handoff' ? handoffFromFlags(io, opts, dir) : intentFromFlags(opts);
  const draft = { kind, agent, ...payload } as Draft;
  const ledger = Ledger.open({ dir, key: keyPath(io, opts), waitMs: waitMs(opts), ...guardOptions(io, opts), ...remoteOpts(io, opts) });
  const res = ledger.append(draft);
  if (res.recovered) io.stderr(`ledger: moved ${res.recovered.unpublished} unpublished bytes to ${res.recovered.file}\n`);
  const r = res.records[0];
  if (r.existing) {
    io.stderr(`ledger: ${kind} ${payload.logical_operation_id}/${payload.execution_id} is already recorded as ${r.id} (seq ${r.seq}) with identical content; nothing appended\n`);
  }
  emit(io, opts, { ok: true, id: r.id, seq: r.seq, existing: r.existing }, r.id);
  return 0;
}

export async function runRecover(io: CliIO, opts: Opts): Promise<number> {
  const dir = ledgerDir(io, opts);
  const dryRun = flag(opts, 'dryRun');
  // A key is optional here: given (--key or $LEDGER_KEY), a HEAD it signed needs no pin.
  const key = one(opts, 'key') !== undefined || envValue(io, 'LEDGER_KEY') !== undefined ? keyPath(io, opts) : undefined;
  const report = Ledger.open({ dir, waitMs: waitMs(opts), key, ...guardOptions(io, opts) }).recover({ dryRun });
  const text =
    report.unpublished === 0
      ? `nothing to recover: records.jsonl ends at HEAD's size ${report.published}`
      : dryRun
        ? `would move ${report.unpublished} unpublished bytes past byte ${report.published} to ${report.file}`
        : `moved ${report.unpublished} unpublished bytes past byte ${report.published} to ${report.file}`;
  emit(io, opts, { ok: true, dry_run: dryRun, ...report }, text);
  return 0;
}

