// The writing verbs' implementation: init, keygen, append (one handoff or intent, or a batch
// from stdin), recover. Registered in write.ts.
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { nodeCrypto } from '../../node-crypto.js';
import { resolve } from 'node:path';
import { LedgerError } from '../../errors.js';
import { KEY_NAME_RE, authorizeCommand, createSigner, parseJsonStrict, trustEntry } from '../../formats.js';
import { Ledger, readSecretKey, readTrust, writeSecretKey } from '../../index.js';
import { assertTrustFileUsable, beforeJoin, initTarget, pinKeyInTrustFile, secondLedgerRefusal, trustNamesOtherLedger, undoRefusedJoin } from '../../project/init.js';
import { keepOutOfGit } from '../../project/git-ignore.js';
import { KINDS, type Draft, type Outcome } from '../../record.js';
import { checkHandoff, checkIntent } from '../../requests/causal.js';
import { checkAgent, checkLength } from '../../requests/fields.js';
import type { Flags } from '../flags.js';
import { agentOf, emit, envValue, keyPath, ledgerDir, readStdinUpTo, trustPath, waitMs, type CliIO, type Global, type Writer } from './common.js';
import { dependsOnOf, evidenceSources, invariantsOf } from './handoff-flags.js';
import { witnessRule, writerOptions } from './remote-opts.js';
import type { APPEND_FLAGS } from './write.js';

export async function runInit(io: CliIO, f: Writer & { name?: string; remote?: string; remoteRef?: string; newLedger?: boolean; policy?: string; witnessAge?: string }): Promise<number> {
  const { dir, root } = initTarget({ cwd: io.cwd, ...(f.dir !== undefined ? { dir: f.dir } : {}), ...(envValue(io, 'LEDGER_DIR') !== undefined ? { envDir: envValue(io, 'LEDGER_DIR') } : {}), joining: f.remote !== undefined });
  // `init --remote` may join a ledger that exists here to a remote.
  if (existsSync(`${dir}/HEAD`) && f.remote === undefined) {
    throw new LedgerError('INPUT_EXISTS', `a ledger already exists at ${dir}`, {}, '`ledger init` never overwrites a ledger: use another --dir');
  }
  const name = f.name === undefined ? undefined : checkLength(f.name, 'name', 128);
  const wait = waitMs(f);
  const kp = keyPath(io, f, root);
  const tp = trustPath(io, f, root);
  // Everything that can refuse is checked before anything is written, so a refused init leaves
  // no key file behind: the existing key, the agent, and the trust file it would pin into.
  const existing = existsSync(kp) ? readSecretKey(kp) : null;
  const agent = checkAgent(agentOf(io, f, existing?.name ?? 'harness'));
  assertTrustFileUsable(tp);
  // Issue 25 item 4: no second ledger by accident. A plain init where the trust file or a git
  // remote already names the project's ledger is refused unless --new-ledger says so.
  const existingKey = existing ? createSigner(existing.seed).publicKey : null;
  if (f.remote === undefined && f.newLedger !== true) {
    const byTrust = trustNamesOtherLedger(tp, existingKey);
    const remote = await Ledger.otherLedgerRemote(root);
    if (byTrust) throw secondLedgerRefusal({ reason: byTrust, remote: remote.likely });
    if (remote.held) throw secondLedgerRefusal({ reason: `the git remote ${remote.held.name} (${remote.held.url}) holds a ledger`, remote: remote.held.name });
  }
  // Issue 25 item 3: a machine joining a team's ledger (its trust file exists and does not pin
  // this key) is authorized by an admin's key record, never by editing the committed trust file.
  const joiningTeam = f.remote !== undefined && existsSync(tp) && !readTrust(tp).keys.some((k) => k.key === existingKey);
  // A join can still be refused after this (the remote's answer): what init writes before it is
  // noted, so a refused join puts it back (project/init.ts undoRefusedJoin).
  const before = f.remote !== undefined ? beforeJoin(kp, tp) : null;
  // In a git work tree, git is made to ignore the key and the ledger before either exists, so no
  // `git add -A` ever sees them (issue 14.2); a git that cannot say refuses the init here.
  const kept = keepOutOfGit(kp, dir, f.remote !== undefined ? [join(dirname(dir), 'HANDOFF.md'), join(dirname(dir), 'HANDOFF.yml')] : []);
  let created = false;
  let key: { name: string; seed: Uint8Array };
  if (existing) key = existing;
  else {
    key = { name: 'harness', seed: new Uint8Array(nodeCrypto().randomBytes(32)) };
    writeSecretKey(kp, key.name, key.seed);
    created = true;
  }
  const signer = createSigner(key.seed);
  // The trust file is the harness's: pin a key we just created; warn about one we did not.
  const pinned = joiningTeam ? false : pinKeyInTrustFile(tp, key.name, signer.publicKey, created);
  if (f.remote !== undefined) {
    try {
      return await runJoin(io, f, { dir, remote: f.remote, signer, agent, name, waitMs: wait, trustPath: tp, keyPath: kp, created, pinned, joiningTeam, gitignore: kept });
    } catch (e) {
      undoRefusedJoin(e, before!, { created, kept });
      throw e;
    }
  }
  const { result } = Ledger.init({ dir, key: signer, agent, name, waitMs: wait, trust: tp, env: io.env });
  const g = result.records[0];
  const lines = [`initialised ledger ${dir}`, `genesis ${g.id}`];
  if (created) lines.push(`created key ${kp} (mode 0600) and pinned it in ${tp} as an admin key (it authorizes other machines: \`ledger trust add\`)`);
  if (kept?.file) lines.push(`git ignores ${kept.added.join(' and ')} now (added to ${kept.file}): commit the trust file, never the key`);
  if (!pinned) io.stderr(`ledger: warning: key ${signer.publicKey} is not pinned in ${tp}; \`ledger audit\` will fail key-pin until the harness pins it\n`);
  if (kept) {
    const { untrackedNodeModules } = await import('../../project/untracked-deps.js');
    const deps = untrackedNodeModules(root);
    if (deps) io.stderr(`ledger: warning: ${deps}\n`);
  }
  for (const t of kept?.tracked ?? []) io.stderr(`ledger: warning: git already tracks ${t}; ignoring it does not take it out of git: \`git rm -r --cached ${t}\`${t === kp ? ', and make a new key, since its secret is in the history' : ''}\n`);
  emit(io, f, { ok: true, dir, genesis: g.id, key: signer.publicKey, key_created: created, trust: tp, pinned, gitignore: kept ? { file: kept.file, added: kept.added, tracked: kept.tracked } : null }, lines);
  return 0;
}

interface JoinInput {
  dir: string;
  remote: string;
  signer: ReturnType<typeof createSigner>;
  agent: string;
  name: string | undefined;
  waitMs: number;
  trustPath: string;
  keyPath: string;
  created: boolean;
  pinned: boolean;
  /** A new machine of a team: its key is authorized by an admin's `key` record (issue 25). */
  joiningTeam: boolean;
  gitignore: { file: string | null; added: string[]; tracked: string[] } | null;
}

/** `ledger init --remote` (SPEC 11): joins the ledger here to the remote through Ledger.join. */
async function runJoin(io: CliIO, f: Global & { remoteRef?: string; policy?: string; witnessAge?: string }, j: JoinInput): Promise<number> {
  const ref = f.remoteRef;
  if (ref !== undefined && !/^refs\/[A-Za-z0-9._/-]+$/.test(ref)) throw new LedgerError('USAGE', `--remote-ref expected a ref under refs/, got "${ref}"`);
  const opts = { dir: j.dir, remote: j.remote, ...(ref !== undefined ? { ref } : {}), trust: j.trustPath, key: j.signer, agent: j.agent, name: j.name, env: io.env, waitMs: j.waitMs, cwd: io.cwd };
  // SPEC 13: under a witness policy the remote's state is taken only when its witnesses stand behind it.
  const rule = witnessRule(io, f, j.trustPath);
  const { ledger, result: r } = rule ? await Ledger.joinWitnessed({ ...opts, rule }) : Ledger.join(opts);
  // SPEC 11: the views follow the local copy: a join that took the remote's records renders them.
  if (r.adopted > 0) {
    try {
      for (const w of (await ledger.renderViews()).warnings) io.stderr(`ledger: warning: ${w}\n`);
    } catch (e) {
      io.stderr(`ledger: warning: joined, but the views were not rendered (${(e as Error).message.split('\n')[0]}); run \`ledger render\`\n`);
    }
  }
  const url = r.url;
  const lines = [
    r.created ? `initialised ledger ${j.dir} and published its genesis to ${url} (${r.ref})` : `joined the ledger on ${url} (${r.ref}) at seq ${r.head.seq}: ${r.adopted} record${r.adopted === 1 ? '' : 's'} verified and copied to ${j.dir}`,
    `genesis ${r.head.genesis}`,
  ];
  const authorize = j.joiningTeam ? authorizeCommand(j.signer.publicKey, [j.agent]) : null;
  if (j.created && !j.joiningTeam) lines.push(`created key ${j.keyPath} (mode 0600) and pinned it in ${j.trustPath} as an admin key (commit the trust file; machines that join later are authorized in the ledger)`);
  if (j.created && j.joiningTeam) lines.push(`created key ${j.keyPath} (mode 0600) for this machine`);
  if (j.gitignore?.file) lines.push(`git ignores ${j.gitignore.added.join(' and ')} now (added to ${j.gitignore.file}): commit the trust file, never the key`);
  if (authorize) {
    // Issue 25 item 3: the one line a person passes on; writes here are refused until it lands.
    lines.push('this machine writes once an admin authorizes its key; an admin runs, on any machine with the ledger:', `  ${authorize}`);
  } else if (!j.pinned) io.stderr(`ledger: warning: key ${j.signer.publicKey} is not pinned in ${j.trustPath}; other machines will refuse its records until the trust file pins it\n`);
  emit(io, f, { ok: true, dir: j.dir, genesis: r.head.genesis, seq: r.head.seq, remote: { url, ref: r.ref, commit: r.commit }, created: r.created, adopted: r.adopted, key: j.signer.publicKey, key_created: j.created, trust: j.trustPath, pinned: j.pinned, authorize }, lines);
  return 0;
}

export async function runKeygen(io: CliIO, f: Global & { out?: string; name?: string }): Promise<number> {
  if (f.out === undefined) throw new LedgerError('USAGE', '--out is required (where to write the new secret key)');
  const name = f.name ?? 'harness';
  if (!KEY_NAME_RE.test(name)) throw new LedgerError('USAGE', `--name must be 1-64 chars of [A-Za-z0-9._@-], got "${name}"`);
  const seed = new Uint8Array(nodeCrypto().randomBytes(32));
  const target = resolve(io.cwd, f.out);
  writeSecretKey(target, name, seed);
  const entry = trustEntry(name, createSigner(seed).publicKey);
  emit(io, f, { ok: true, out: target, entry }, [JSON.stringify(entry)]);
  if (!f.json) io.stderr(`ledger: wrote ${target} (mode 0600); add the entry above to the trust file's "keys"\n`);
  return 0;
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

/** Policy: `append --batch` reads at most this much stdin (about a million small payloads); more is refused as too large, never decoded. */
export const BATCH_MAX_BYTES = 256 << 20;

/**
 * Parses `append --batch` input: one JSON payload object per non-empty line, strictly.
 * `caller` is --agent (or $LEDGER_AGENT): who is writing. Policy (issue 13 finding 2): a payload
 * may name its agent only if that is the caller; without a caller, every payload names one and
 * the same agent (a batch is one writer's). Either way a refusal refuses the whole batch.
 * Policy: only handoff, intent and revoke: start, checkpoint, finish and every workflow kind go
 * through the workflow's rules or not at all (the library's append refuses them too).
 * Returns the drafts and the stdin line of each. Speed (issue 26: 20,000 records/s): their schema
 * is checked once, by the store (store/append.ts assertDrafts, naming every problem of every
 * draft, before the lock or anything is read), and batchSchemaError names those problems by line.
 */
export function parseBatch(text: string, caller: string | undefined): { drafts: Draft[]; lineOf: number[] } {
  const drafts: Draft[] = [];
  let named: { agent: unknown; line: number } | null = null;
  const lineOf: number[] = [];
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
    lineOf.push(n);
  });
  if (drafts.length === 0) throw new LedgerError('INPUT_SCHEMA', 'append --batch read no payloads from stdin');
  return { drafts, lineOf };
}

/** The store's schema refusal of a batch, its problems named by stdin line (every problem of the first bad payload, issue 26); any other error as it is. */
function batchSchemaError(e: unknown, lineOf: readonly number[]): unknown {
  const payloads = e instanceof LedgerError && e.code === 'INPUT_SCHEMA' ? (e.data.payloads as { index: number; problems: string[] }[] | undefined) : undefined;
  if (!payloads?.length) return e;
  const bad = payloads.map((p) => ({ line: lineOf[p.index], problems: p.problems }));
  const [first, ...rest] = bad;
  const more = rest.length ? ` (and ${rest.length} more bad payload${rest.length === 1 ? '' : 's'}: line${rest.length === 1 ? '' : 's'} ${rest.slice(0, 5).map((b) => b.line).join(', ')}${rest.length > 5 ? ', ...' : ''})` : '';
  return new LedgerError('INPUT_SCHEMA', `stdin line ${first.line}: ${first.problems.length} problem${first.problems.length === 1 ? '' : 's'}: ${first.problems.join('; ')}${more}; nothing was appended`, { line: first.line, problems: first.problems, bad_lines: bad.map((b) => b.line) }, 'see `ledger append --help` for the payload format');
}

/** The flags of a handoff from flags, of an intent, and of neither (a batch). */
const HANDOFF_ONLY = ['outcome', 'evidence', 'invariant', 'dependsOn', 'supersedes'] as const;
const FROM_FLAGS = ['op', 'exec', ...HANDOFF_ONLY, 'note', 'action'] as const;
type AppendFlags = Flags<ReturnType<typeof APPEND_FLAGS>> & Global;
const isGiven = (f: AppendFlags, k: (typeof FROM_FLAGS)[number]) => (Array.isArray(f[k]) ? (f[k] as string[]).length > 0 : f[k] !== undefined);
const flagName = (k: string) => k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());

export async function runAppend(io: CliIO, kind: string | undefined, f: AppendFlags): Promise<number> {
  if (f.batch) {
    if (kind !== undefined) throw new LedgerError('USAGE', `append --batch takes no kind (each payload names its own), got "${kind}"`);
    const stray = FROM_FLAGS.find((k) => isGiven(f, k));
    if (stray) throw new LedgerError('USAGE', `append --batch reads payloads from stdin; --${flagName(stray)} does not apply`);
    const caller = agentOf(io, f);
    if (caller !== undefined) checkAgent(caller);
    const { drafts, lineOf } = parseBatch(await readStdinUpTo(io, BATCH_MAX_BYTES, '`append --batch` input'), caller);
    const ledger = Ledger.open(writerOptions(io, f));
    // Retry identity (issue 4): identical retries of handoffs, intents and revocations in the
    // batch return the records that exist; the rest are appended under one lock and one HEAD.
    let res: ReturnType<Ledger['append']>;
    try {
      res = ledger.append(drafts);
    } catch (e) {
      throw batchSchemaError(e, lineOf);
    }
    if (res.recovered) io.stderr(`ledger: moved ${res.recovered.unpublished} unpublished bytes to ${res.recovered.file}\n`);
    const existing = res.records.filter((r) => r.existing).length;
    if (existing) io.stderr(`ledger: ${existing} of ${res.records.length} payloads were already recorded with identical content; appended ${res.appended}\n`);
    // A loop, not Math.min(...seqs): spreading 150,000 arguments overflows the stack (issue 14.7).
    const seqs = res.records.reduce((m, r) => ({ first: Math.min(m.first, r.seq), last: Math.max(m.last, r.seq) }), { first: Infinity, last: -Infinity });
    // Policy (issue 26): a summary by default (200,000 ids are no answer to read); the ids one
    // per line with --ids; --json carries them always.
    const summary = `appended ${res.appended} record${res.appended === 1 ? '' : 's'}${existing ? `, ${existing} already recorded` : ''}: seq ${seqs.first}-${seqs.last}, HEAD ${res.records.at(-1)!.id}`;
    emit(io, f, { ok: true, count: res.records.length, appended: res.appended, existing, first_seq: seqs.first, last_seq: seqs.last, ids: res.records.map((r) => r.id) }, f.ids ? res.records.map((r) => r.id) : [summary]);
    return 0;
  }
  if (f.ids) throw new LedgerError('USAGE', '--ids applies only with --batch (one append prints its one id)');
  if (kind === undefined) throw new LedgerError('USAGE', 'append needs a kind (`ledger append handoff ...`, `ledger append intent ...`) or --batch');
  if (kind !== 'handoff' && kind !== 'intent') throw new LedgerError('USAGE', `append writes "handoff" or "intent" records from flags (other kinds: --batch or their own verbs), got "${kind}"`);
  let op: string;
  let exec: string;
  let write: (ledger: Ledger) => ReturnType<Ledger['append']>;
  if (kind === 'handoff') {
    if (f.action !== undefined) throw new LedgerError('USAGE', '--action applies to `append intent`, not to a handoff');
    const req = checkHandoff({
      agent: agentOf(io, f) as string, op: f.op as string, exec: f.exec as string, outcome: f.outcome as Outcome,
      evidence: evidenceSources(f.evidence), cwd: io.cwd,
      invariants: invariantsOf(f.invariant), depends_on: dependsOnOf(f.dependsOn),
      ...(f.supersedes.length ? { supersedes: f.supersedes } : {}), ...(f.note !== undefined ? { note: f.note } : {}),
    });
    [op, exec, write] = [req.op, req.exec, (l) => l.handoff(req)];
  } else {
    const stray = HANDOFF_ONLY.find((k) => isGiven(f, k));
    if (stray) throw new LedgerError('USAGE', `--${flagName(stray)} does not apply to an intent (it takes --op, --exec, --action, --note)`);
    const req = checkIntent({ agent: agentOf(io, f) as string, op: f.op as string, exec: f.exec as string, action: f.action as string, ...(f.note !== undefined ? { note: f.note } : {}) });
    [op, exec, write] = [req.op, req.exec, (l) => l.intent(req)];
  }
  const res = write(Ledger.open(writerOptions(io, f)));
  if (res.recovered) io.stderr(`ledger: moved ${res.recovered.unpublished} unpublished bytes to ${res.recovered.file}\n`);
  const r = res.records[0];
  if (r.existing) {
    io.stderr(`ledger: ${kind} ${op}/${exec} is already recorded as ${r.id} (seq ${r.seq}) with identical content; nothing appended\n`);
  }
  emit(io, f, { ok: true, id: r.id, seq: r.seq, existing: r.existing }, r.id);
  return 0;
}

export async function runRecover(io: CliIO, f: Global & { trust?: string; key?: string; dryRun: boolean; wait?: string }): Promise<number> {
  const dir = ledgerDir(io, f);
  // A key is optional here: given (--key or $LEDGER_KEY), a HEAD it signed needs no pin.
  const key = f.key !== undefined || envValue(io, 'LEDGER_KEY') !== undefined ? keyPath(io, f) : undefined;
  const report = Ledger.open({ dir, waitMs: waitMs(f), key, trust: trustPath(io, f), env: io.env }).recover({ dryRun: f.dryRun });
  const text =
    report.unpublished === 0
      ? `nothing to recover: records.jsonl ends at HEAD's size ${report.published}`
      : f.dryRun
        ? `would move ${report.unpublished} unpublished bytes past byte ${report.published} to ${report.file}`
        : `moved ${report.unpublished} unpublished bytes past byte ${report.published} to ${report.file}`;
  emit(io, f, { ok: true, dry_run: f.dryRun, ...report }, text);
  return 0;
}
