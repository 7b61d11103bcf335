// The agents verbs' implementation (declared in ./agents.ts): the I/O around src/agents/.
//   mcp    fixes the agent, the ledger, the key and the trust file once, at start, then serves
//   hook   reads the payload, asks the rules only what the event needs, prints the answer; any
//          problem at all is silence and exit 0 (SPEC 12: a hook never breaks a session; for
//          Claude Code an exit 2 from a Stop hook would even block the stop)
//   setup  plans every file first (a refusal writes nothing), then writes, checks or removes
import { existsSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { EXIT, LedgerError } from '../../errors.js';
import { Ledger, readSecretKey } from '../../index.js';
import { AGENT_RE } from '../../record.js';
import { checkAgent } from '../../requests/fields.js';
import type { ToolContext } from '../../agents/tools/kit.js';
import type { HookFacts, Payload } from '../../agents/hooks/events.js';
import { alreadyNoted, comparesByTime, ownLiveItems, ownsLiveItem, unrecordedWork, type Unrecorded } from '../../agents/hooks/rules.js';
import { markStopFailure, takeStopFailure, interruptedFromTranscript } from '../../agents/hooks/stop-failure.js';
import { VERSION } from '../cli.js';
import { neutralise, neutraliseLine } from '../../text/sanitize.js';
import type { Flags } from '../flags.js';
import { agentOf, emit, keyPath, ledgerLocation, readStdinUpTo, trustPath, waitMs, type CliIO, type Global, type Writer } from './common.js';
import type { HOOK, SETUP } from './agents.js';

export async function runMcp(io: CliIO, f: Writer): Promise<number> {
  const loc = ledgerLocation(io, f);
  // Policy: the server does not start without an agent name: every write needs one, and it is
  // the server's, never a tool argument (SPEC 12).
  const agent = checkAgent(agentOf(io, f));
  const key = keyPath(io, f, loc.root);
  const trust = trustPath(io, f, loc.root);
  const wait = waitMs(f);
  // The server holds the key, read once now, so the agent's own shell need not be able to.
  let seed: Uint8Array | null = null;
  let keyError: unknown = null;
  try {
    seed = readSecretKey(key).seed;
  } catch (e) {
    keyError = e;
  }
  // One line each, record text neutralised as at every text sink (src/text/sanitize.ts).
  const log = (line: string) => io.stderr(`ledger mcp: ${neutraliseLine(line)}\n`);
  if (keyError) log(`no usable key (${(keyError as Error).message.split('\n')[0]}); writing tools will be refused`);
  // SPEC 13, issue 27 item 3: after a tool's write is published in a joined ledger, its
  // checkpoint goes to the policy's witnesses, as after a command (witness-after.ts). Policy: in
  // the background, one publication after another, never before the tool answers: a witness that
  // is away delays no call; what it answered is kept for `status` and `doctor`, and a witness
  // missed now cosigns the next publication (a checkpoint covers every record before it).
  // Hooks never collect: they must not delay a session, and the next publication covers theirs.
  let witnessing: Promise<void> = Promise.resolve();
  const published = () => {
    witnessing = witnessing.then(async () => {
      const { afterPublication } = await import('./witness-after.js');
      await afterPublication({ ...io, stderr: (t: string) => log(t.replace(/^ledger: /, '').trimEnd()) }, { dir: loc.dir, trustFile: trust, flags: {} });
    }).catch((e: unknown) => log(`warning: the write is published, but its witnesses were not asked (${String((e as Error)?.message ?? e).split('\n')[0]})`));
  };
  const ctx: ToolContext = {
    agent,
    dir: loc.dir,
    root: loc.root,
    cwd: io.cwd,
    env: io.env,
    trustPath: trust,
    // The environment names the per-user state directory, where a join to a remote is kept.
    reader: () => Ledger.open({ dir: loc.dir, env: io.env, waitMs: wait }),
    writer: () => {
      if (!seed) throw keyError;
      // SPEC 7: the writer checks its key against the project's trust file (a joined ledger's: the one named at join).
      return Ledger.open({ dir: loc.dir, key: seed, waitMs: wait, env: io.env, fallbackTrust: trust, onPublished: published });
    },
    hasKey: () => seed !== null,
    joined: Ledger.open({ dir: loc.dir, env: io.env }).joined(),
    current: async () => {
      const got = await Ledger.open({ dir: loc.dir, env: io.env, waitMs: wait }).current();
      for (const w of got?.warnings ?? []) log(`warning: ${w}`);
      return got?.currency ?? null;
    },
    currency: () => Ledger.open({ dir: loc.dir, env: io.env }).currency(),
  };
  const { serveMcp } = await import('../../agents/mcp-front.js');
  await serveMcp({ ctx, version: VERSION, log });
  return EXIT.ok;
}

/** Policy: a hook reads its payload for at most this long; a harness always closes stdin. */
const HOOK_STDIN_MS = 5_000;
/** Policy: and at most this many bytes of it (a hook payload names files, it does not hold them); more is no payload. */
export const HOOK_STDIN_MAX = 1 << 20;

export function parsePayload(text: string): Payload | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Payload) : null;
  } catch {
    return null;
  }
}

async function readPayload(io: CliIO): Promise<Payload | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), HOOK_STDIN_MS);
    timer.unref();
  });
  try {
    // Bounded in size (the read stops past HOOK_STDIN_MAX) and in time: the answer comes at the
    // deadline whatever stdin does, and the process then exits (main.ts), never waiting on it.
    const text = await Promise.race([readStdinUpTo(io, HOOK_STDIN_MAX, 'the hook payload', HOOK_STDIN_MS), timeout]);
    if (text === null) return null;
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Payload) : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

export async function runHook(io: CliIO, agentKind: string, event: string, f: Flags<ReturnType<typeof HOOK>> & Global): Promise<number> {
  try {
    await answerHook(io, agentKind, event, f);
  } catch {
    // Policy: silence. A hook's failure must never reach the session (SPEC 12).
  }
  return EXIT.ok;
}

async function answerHook(io: CliIO, agentKind: string, event: string, f: Flags<ReturnType<typeof HOOK>> & Global): Promise<void> {
  const [claude, codex] = await Promise.all([import('../../agents/hooks/claude.js'), import('../../agents/hooks/codex.js')]);
  if (agentKind === 'claude' ? !claude.isClaudeEvent(event) : agentKind === 'codex' ? !codex.isCodexEvent(event) : true) return;
  const handed = io.env.LEDGER_HOOK_PAYLOAD;
  const payload = handed !== undefined ? parsePayload(handed) : await readPayload(io);
  if (!payload) return;
  // Policy: Claude Code does not wait for a StopFailure hook (fire and forget: in `claude -p`
  // the session's end kills it within a moment), and the note needs a fetch and a publication.
  // So the hook hands its payload to a detached copy of itself (its own process group), which
  // writes the note, and returns at once.
  if (agentKind === 'claude' && event === 'stop-failure' && handed === undefined) {
    // The session's SessionEnd hook (which Claude Code waits for) may run before the detached copy
    // writes: it finds this mark and writes the note as "interrupted" itself (claude.ts).
    markStopFailure(io.env, payload);
    const { spawn } = await import('node:child_process');
    const small = JSON.stringify({ ...payload, last_assistant_message: typeof payload.last_assistant_message === 'string' ? payload.last_assistant_message.slice(0, 1000) : undefined });
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1], 'hook', 'claude', 'stop-failure', ...(f.agent !== undefined ? ['--agent', f.agent] : [])], {
      cwd: io.cwd, env: { ...io.env, LEDGER_HOOK_PAYLOAD: small }, detached: true, stdio: 'ignore',
    });
    child.unref();
    return;
  }
  const loc = ledgerLocation(io, f);
  if (loc.source === 'none' || !existsSync(join(loc.dir, 'HEAD'))) return;
  const named = agentOf(io, f);
  const agent = named !== undefined && AGENT_RE.test(named) ? named : null;
  const ledger = Ledger.open({ dir: loc.dir, env: io.env });
  // SPEC 11: a joined ledger is brought to the remote first, within the read budget; a stop, a
  // session end or a stop failure never acts on a copy it could not refresh (rules.ts, claude.ts).
  const currency = (await ledger.current())?.currency ?? null;
  const now = new Date();
  let records: ReturnType<Ledger['workState']> | null = null;
  // One fold serves the status and the work log, from the fold memo and the kept folds as
  // `ledger status` reads them (never every record held in memory: a hook must start fast).
  const read = () => (records ??= ledger.workState({ agent, now }));
  // The work tree of the session: the payload's cwd when it names a folder, else ours.
  const cwd = typeof payload.cwd === 'string' && isAbsolute(payload.cwd) && isDir(payload.cwd) ? payload.cwd : io.cwd;
  // git is asked (and its module loaded) only at stop and session end, only when the agent owns
  // an item with a live lease, and only once: the rule compares each item with the one answer.
  const asksGit = event !== 'session-start' && agent !== null && payload.stop_hook_active !== true && currency?.current !== false && ownsLiveItem(read().log, agent, now);
  const worktree = asksGit ? await import('../../agents/hooks/worktree.js') : null;
  // The work tree's content (handoff/code-place.ts), asked once, only for a record that has one to compare.
  let content: string | null | undefined;
  const contentNow = () => {
    if (content !== undefined) return content;
    content = null;
    if (!worktree) return content;
    return (content = worktree.workTreeContent(cwd, { ledgerDir: realOr(loc.dir), views: [join(realOr(dirname(loc.dir)), 'HANDOFF.md'), join(realOr(dirname(loc.dir)), 'HANDOFF.yml')] }));
  };
  // The work tree's last change by time, asked only when an item is compared by time (its record
  // carries no content digest, or the content cannot be told now). The views' default folder
  // (handoff/views.ts defaultViewsDir), without loading the views module and its YAML library: a
  // hook must start fast.
  const latest = worktree && comparesByTime(read().log, agent!, now, contentNow) ? await worktree.latestWorkTreeChange(cwd, { dir: loc.dir, views: dirname(loc.dir) }) : null;
  let unrecorded: Unrecorded[] | null = null;
  const facts: HookFacts = {
    agent,
    now,
    currency,
    status: () => read().status,
    unrecorded: () => {
      if (unrecorded) return unrecorded;
      if (agent === null) return (unrecorded = []);
      return (unrecorded = unrecordedWork(read().log, agent, now, (since) => (latest === null ? null : latest > since), contentNow));
    },
    ownLive: () => (agent === null ? [] : ownLiveItems(read().log, agent, now)),
    noted: (slug, sinceSeq) => {
      const item = read().log.items.get(slug);
      return agent !== null && item !== undefined && alreadyNoted(item, agent, sinceSeq);
    },
  };
  // A session that ended after a StopFailure: its end is the interruption (claude.ts).
  const interrupted = agentKind === 'claude' && event === 'session-end' ? (takeStopFailure(io.env, payload.session_id) ?? interruptedFromTranscript(payload.transcript_path)) : null;
  const answer = agentKind === 'claude'
    ? claude.claudeHook(interrupted ? 'stop-failure' : (event as never), interrupted ? { ...interrupted, hook_event_name: 'StopFailure' } : payload, facts)
    : codex.codexHook(event as never, payload, facts);
  // As every --json sink does (common.ts emit): unsafe code points as JSON escapes, the same values.
  if (answer.stdout) io.stdout(neutralise(JSON.stringify(answer.stdout)) + '\n');
  if (answer.notes.length && agent !== null) {
    // Best effort (session end, stop failure): a short wait for the lock, and any refusal is silence.
    let seed: Uint8Array;
    try {
      seed = readSecretKey(keyPath(io, f, loc.root)).seed;
    } catch {
      return;
    }
    const writer = Ledger.open({ dir: loc.dir, key: seed, waitMs: 2_000, env: io.env });
    for (const n of answer.notes) {
      try {
        await writer.note({ slug: n.slug, agent, text: n.text, event: n.event });
      } catch {
        /* best effort */
      }
    }
  }
}

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export async function runSetup(io: CliIO, kind: string, f: Flags<ReturnType<typeof SETUP>> & Global): Promise<number> {
  if (kind !== 'claude' && kind !== 'codex') throw new LedgerError('USAGE', `setup takes claude or codex, got "${kind}"`);
  const agent = checkAgent(f.agent ?? kind);
  const { check, remove } = f;
  if (check && remove) throw new LedgerError('USAGE', '--check and --remove do not go together: --check says whether setup is in place');
  const loc = ledgerLocation(io, f);
  if (loc.source === 'none' || !existsSync(join(loc.dir, 'HEAD'))) {
    throw new LedgerError('INPUT_NOT_FOUND', `no ledger here or above (${loc.dir}); setup installs the agents' access to one`, { dir: loc.dir }, 'run `ledger init` first');
  }
  const root = loc.root;
  const { ledgerCommand, applyPlan, changed, fileState, launcherFinds } = await import('../../agents/setup/common.js');
  const command = ledgerCommand();
  const req = { root, agent, command, remove };
  // Each agent's module alone: codex's loads the TOML library, which claude's never needs.
  const plan = kind === 'claude' ? (await import('../../agents/setup/claude.js')).planClaude(req) : (await import('../../agents/setup/codex.js')).planCodex(req);
  const shown = (p: string) => relative(io.cwd, p) || p;
  if (check) {
    const files = plan.map((c) => ({ file: relative(root, c.path), state: fileState(c) }));
    const ok = files.every((f) => f.state === 'ok');
    const lines = plan.map((c) => `${fileState(c).padEnd(7)} ${shown(c.path)}`);
    if (!ok) lines.push(`run \`ledger setup ${kind}${agent !== kind ? ` --agent ${agent}` : ''}\` to write them`);
    emit(io, f, { ok, kind, agent, root, files, exit_code: ok ? EXIT.ok : EXIT.setupDiffers }, lines);
    return ok ? EXIT.ok : EXIT.setupDiffers;
  }
  applyPlan(plan, root);
  const todo = changed(plan);
  const files = plan.map((c) => ({ file: relative(root, c.path), action: !todo.includes(c) ? 'unchanged' : c.after === null ? 'removed' : c.before === null ? 'created' : 'updated' }));
  const lines = files.map((f) => `${f.action.padEnd(9)} ${shown(join(root, f.file))}`);
  if (!remove) {
    lines.push('the MCP server and hooks run the project\'s installed ledger (node_modules/.bin/ledger, found from the project folder up), else the `ledger` on PATH: no path of this machine is written, so the files can be committed and work on every clone');
    if (!launcherFinds(root, io.env)) lines.push('warning: no ledger is installed in this project (node_modules/.bin/ledger) and none is on PATH here: install the package in the project (npm install handoff-ledger) or globally before an agent starts');
    lines.push(kind === 'claude'
      ? 'next: start Claude Code in this project once, trust it and approve the project MCP server "handoff-ledger" when it asks; .claude/settings.json allows its tools (permission rule mcp__handoff-ledger), which `claude -p` honours only in a project the user trusted (else pass --allowedTools mcp__handoff-ledger)'
      : 'next: trust this project in Codex and approve its hooks when Codex asks ("hooks need review"): `codex exec` runs a project\'s hooks only once they were trusted in an interactive `codex` session, and skips them silently until then (automation that vets the hooks itself may pass --dangerously-bypass-hook-trust)');
  }
  emit(io, f, { ok: true, kind, agent, root, remove, command, files }, lines);
  return EXIT.ok;
}
