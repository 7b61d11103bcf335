// Builds the `ledger` command line (cac). createCli() never exits and never reads process
// globals, so tests drive it in-process; bin.ts maps its outcome to an exit code.
// Each verb is a declaration (verbs.ts) whose implementation is imported only when that verb
// runs, to keep start-up light (`ledger append` must cost little more than starting node).
import { cac, type CAC } from 'cac';
import { EXIT, EXIT_MEANINGS, LedgerError } from '../errors.js';
import { boundaryFor, runFor } from '../fs/boundary.js';
import { neutralise, neutraliseDiagnostic, neutraliseLine } from '../text/sanitize.js';
import { GLOBAL, publishedWrites, restoreRawValues, type CliIO } from './commands/common.js';
import { declare } from './flags.js';
import { declareVerbs, type Plane, type VerbDeclaration } from './verbs.js';
import { withProgressLine } from './progress-line.js';
import { WRITE_VERBS } from './commands/write.js';
import { READ_VERBS } from './commands/read.js';
import { HANDOFF_VERBS } from './commands/handoff.js';
import { AUDIT_VERBS } from './commands/audit.js';
import { CAUSAL_VERBS } from './commands/causal.js';
import { DOCTOR_VERBS } from './commands/doctor.js';
import { REMOTE_VERBS } from './commands/remote.js';
import { AGENTS_VERBS } from './commands/agents.js';
import { TRUST_VERBS } from './commands/trust.js';
import { WITNESS_VERBS } from './commands/witness.js';
import { PROOF_VERBS } from './commands/proof.js';

export const VERSION = '0.1.0';

/** Every verb, in the order the top-level help lists them: the porcelain first, then the plumbing (verbs.ts). */
export const VERBS: readonly VerbDeclaration[] = [...WRITE_VERBS, ...HANDOFF_VERBS, ...READ_VERBS, ...CAUSAL_VERBS, ...AUDIT_VERBS, ...REMOTE_VERBS, ...TRUST_VERBS, ...AGENTS_VERBS, ...DOCTOR_VERBS, ...PROOF_VERBS, ...WITNESS_VERBS]
  .map((v, i) => ({ v, i }))
  .sort((a, b) => (a.v.plane === b.v.plane ? a.i - b.i : a.v.plane === 'porcelain' ? -1 : 1))
  .map(({ v }) => v);

/** The top-level help's two lists of verbs, as git's help splits its commands. */
const PLANE_TITLES: Record<Plane, string> = {
  porcelain: 'Commands (what people and agents type)',
  plumbing: 'Plumbing (what scripts and other machines call; their output stays stable)',
};

/** cac's one "Commands" section split in two, each line kept as cac wrote it (one per verb, in VERBS order). */
function commandSections(body: string): { title: string; body: string }[] {
  const lines = body.split('\n');
  const planeOf = (line: string) => VERBS.find((v) => line.trimStart().split(' ', 1)[0] === v.name)?.plane ?? 'porcelain';
  return (['porcelain', 'plumbing'] as const).map((p) => ({ title: PLANE_TITLES[p], body: lines.filter((l) => planeOf(l) === p).join('\n') }));
}

/**
 * The command line. With `verb`, only that verb's command is built (an unknown word builds them
 * all, for the usual error); without, every verb, for the full help.
 */
export function createCli(io: CliIO, verb?: string, noVerbs = false): CAC {
  const cli = cac('ledger');
  declare(cli.globalCommand, GLOBAL);
  if (!noVerbs) declareVerbs(cli, io, VERBS, verb);
  cli.example('ledger init --name my-project                    # a ledger in .ledger/, a key in keys/');
  cli.example('ledger append handoff --agent codex --op migrate_schema_17 --exec execution_002 --outcome success --evidence schema=db/schema.sql --invariant tests=ok');
  cli.example('ledger audit && ledger gate migrate_schema_17 --require-invariant tests && ./deploy.sh');
  cli.example('ledger start fix-tz --agent claude --summary "fix toLocal()"   # then checkpoint, finish; resume to take over');
  cli.example('ledger doctor                                        # what is wrong with this setup, and how to fix it');
  cli.example('ledger help gate                                     # a verb\'s flags and exit codes (= ledger gate --help)');
  cli.help((sections) => {
    const matched = cli.matchedCommand ? VERBS.find((v) => v.name === cli.matchedCommand!.name) : undefined;
    // Policy: a verb's help opens with what it does and ends with its own exit codes (issue
    // 14.9), declared beside it (verbs.ts), so scripts read there what they may branch on.
    if (matched) {
      return [
        sections[0],
        { body: matched.description },
        ...sections.slice(1),
        { title: 'Exit codes', body: matched.exits.map((e) => `  ${String(e.code).padEnd(3)} ${e.meaning}`).join('\n') },
      ];
    }
    // Policy: the top-level help ends with the exit codes, since scripts branch on them; cac's
    // list of `ledger VERB --help` lines (one per verb) becomes the one line that says how.
    return [
      sections[0],
      { body: 'Signed, hash-chained handoffs between coding agents and people, an independent auditor,\nand a gate that says whether the next step may act now.' },
      ...sections.slice(1).flatMap((sec) => (sec.title === 'Commands' ? commandSections(sec.body) : sec.title?.startsWith('For more info') ? [{ title: 'For a verb\'s flags, examples and exit codes', body: '  $ ledger help VERB        (the same as ledger VERB --help)' }] : [sec])),
      { title: 'Exit codes', body: EXIT_MEANINGS.map((e) => `  ${String(e.code).padEnd(3)} ${e.meaning}`).join('\n') },
    ];
  });
  cli.version(VERSION);
  return cli;
}

/** `ledger help [VERB]` is `ledger [VERB] --help`: the argv it stands for. */
function helpArgv(argv: string[]): string[] {
  if (argv[0] !== 'help') return argv;
  const named = argv.slice(1).find((a) => !a.startsWith('-'));
  return named === undefined ? ['--help'] : [named, '--help'];
}

/** Parses argv (without node and script) and runs the verb; returns the exit code. */
export async function runCli(rawArgv: string[], rawIO: CliIO): Promise<number> {
  const io = neutralisingIO(rawIO);
  const argv = helpArgv(rawArgv);
  let json = argv.includes('--json');
  let verb: string | undefined;
  try {
    const named = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : undefined;
    // cac matches a command on the first positional, and no global option comes before it, so a
    // first word that names a verb is the only command that can match: it is the only one built.
    // `ledger --version` alone prints the version, which no verb changes: none is built (cac
    // would parse the argv once for each of the 40 commands). Only this exact argv: any other
    // word or flag may reach the full help, which lists them all.
    const versionOnly = argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v');
    const cli = createCli(io, named, versionOnly);
    const keys = keyWordsHidden(argv);
    printingThrough(io, () => cli.parse(['node', 'ledger', ...keys.argv], { run: false }));
    restoreRawValues(cli, argv);
    keys.restore(cli);
    json = cli.options.json === true;
    if (!cli.matchedCommand && cli.args.length > 0) throw await unknownVerb(String(cli.args[0]));
    if (!cli.matchedCommand) {
      // `ledger --verison` is a misspelt flag, not a request for the help.
      try {
        cli.globalCommand.checkUnknownOptions();
      } catch (e) {
        throw await withFlagSuggestion(e, cli);
      }
    }
    if (cli.options.help || cli.options.version) return 0;
    if (!cli.matchedCommand) {
      printingThrough(io, () => cli.outputHelp());
      return 0;
    }
    verb = cli.matchedCommand.name;
    // Whom this command acts for (fs/boundary.ts), decided before anything is read: a caller it
    // must not believe (a setuid wrapper's environment naming another user) is refused here.
    try {
      boundaryFor(rawIO.env);
    } catch (e) {
      if (verb === 'hook') return EXIT.ok; // SPEC 12: a hook never breaks a session
      throw e;
    }
    try {
      // A long scan (a first fold, an index build) shows a progress line on a terminal.
      const code = await runFor(rawIO.env, () => withProgressLine(io, async () => {
        const c = (await cli.runMatchedCommand()) as unknown;
        // SPEC 13: a write that was published goes to the policy's witnesses (never failing it).
        if (publishedWrites.has(io)) await (await import('./commands/witness-after.js')).afterPublication(io, publishedWrites.get(io)!);
        return c;
      }));
      return typeof code === 'number' ? code : 0;
    } catch (e) {
      throw await withNameSuggestion(await withFlagSuggestion(e, cli), io, cli);
    }
  } catch (e) {
    return reportError(e, io, json, verb);
  }
}

// A base64url Ed25519 public key (43 characters, `ledger trust add KEY`) begins with "-" for 1 key
// in 64, and the option parser read it as a cluster of one-letter flags ("-h…" as --help), so the
// verb saw no key. No verb has one-letter flags and no flag is that long: such a word (before any
// "--") is parsed as a placeholder with a NUL, which no argument can hold, and put back after.
const KEY_WORD = /^-[A-Za-z0-9_-]{42}$/;

function keyWordsHidden(argv: readonly string[]): { argv: string[]; restore: (cli: CAC) => void } {
  const end = argv.indexOf('--');
  const hidden = new Map<string, string>();
  const out = argv.map((a, i) => {
    if ((end >= 0 && i > end) || !KEY_WORD.test(a)) return a;
    const mark = `\0key${hidden.size}`;
    hidden.set(mark, a);
    return mark;
  });
  const back = (v: unknown): unknown => (typeof v === 'string' ? hidden.get(v) ?? v : Array.isArray(v) ? v.map(back) : v);
  return {
    argv: out,
    restore: (cli) => {
      if (hidden.size === 0) return;
      cli.args = cli.args.map((a) => back(a) as string);
      for (const k of Object.keys(cli.options)) cli.options[k] = back(cli.options[k]);
    },
  };
}

/** The error for a first word that is no verb, with the nearest verbs when one is close. */
async function unknownVerb(word: string): Promise<LedgerError> {
  const { closest, didYouMean } = await import('../text/suggest.js');
  const { distance } = await import('fastest-levenshtein');
  const names = VERBS.map((v) => v.name);
  const guess = didYouMean(closest(distance, word, [...names, 'help']), (n) => `ledger ${n}`);
  return new LedgerError('USAGE', `unknown command "${word}"`, { command: word }, `${guess ? `${guess} ` : ''}run \`ledger --help\` for the list`);
}

/** cac's "Unknown option `--x`", with the nearest flags of the verb (and the global ones) when one is close. */
async function withFlagSuggestion(e: unknown, cli: CAC): Promise<unknown> {
  const m = (e as Error)?.name === 'CACError' ? /^Unknown option `(-{1,2})([^`]+)`/.exec((e as Error).message) : null;
  if (!m) return e;
  const { closest, didYouMean } = await import('../text/suggest.js');
  const options = [...cli.globalCommand.options, ...(cli.matchedCommand?.options ?? [])];
  const flags = [...new Set(options.flatMap((o) => o.rawName.split(/[ ,]+/).filter((w) => w.startsWith('--')).map((w) => w.slice(2))))];
  // cac reports the name camel-cased (`--dryRn`): compared as typed, in kebab case.
  const typed = m[2].replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
  const { distance } = await import('fastest-levenshtein');
  const guess = didYouMean(closest(distance, typed, flags), (f) => `--${f}`);
  const verbHelp = cli.matchedCommand ? `see \`ledger ${cli.matchedCommand.name} --help\`` : 'see `ledger --help`';
  return new LedgerError('USAGE', `Unknown option \`${m[1]}${typed}\``, { option: `${m[1]}${typed}` }, guess ? `${guess} ${verbHelp}` : verbHelp);
}

/** A "no work item SLUG" refusal, with the nearest slugs of the ledger when one is close (commands/name-suggest.ts). */
async function withNameSuggestion(e: unknown, io: CliIO, cli: CAC): Promise<unknown> {
  if (!(e instanceof LedgerError) || e.code !== 'INPUT_NOT_FOUND' || typeof e.data.slug !== 'string') return e;
  const { withSlugSuggestion } = await import('./commands/name-suggest.js');
  const { ledgerDir } = await import('./commands/common.js');
  return withSlugSuggestion(e, () => ledgerDir(io, { dir: (cli.options as { dir?: string }).dir } as Parameters<typeof ledgerDir>[1]));
}

/**
 * The CLI's two sinks, stdout and stderr, neutralised for every verb, so that none can forget
 * (SPEC 10, issue 13 finding 10): stdout as `neutralise` (line feeds kept; a JSON text keeps its
 * values), stderr as `neutraliseDiagnostic` (one write, one line). Everything else of the I/O is
 * the caller's own, reached through the prototype (getters such as `isTTY` stay lazy).
 */
export function neutralisingIO(io: CliIO): CliIO {
  const wrapped = Object.create(io) as CliIO;
  wrapped.stdout = (text) => io.stdout(neutralise(text));
  wrapped.stderr = (text) => io.stderr(neutraliseDiagnostic(text));
  return wrapped;
}

/**
 * cac prints --help and --version with console.info; for the duration of `f` (synchronous) that
 * output goes to `io.stdout` like all other output, so an in-process caller captures it and the
 * process knows whether anything it printed is still unflushed (see main.ts).
 */
function printingThrough<T>(io: CliIO, f: () => T): T {
  const info = console.info;
  console.info = (...parts: unknown[]) => io.stdout(parts.join(' ') + '\n');
  try {
    return f();
  } finally {
    console.info = info;
  }
}

/**
 * What to do next: the thrower's hint when it gave one (a library error states the fact; its
 * hint says what to do), else one chosen by the error's code alone: a bad flag or payload points
 * at the verb's help, where every flag is listed with its form and examples; a bad trust, key or
 * JSON file at the file and `ledger doctor`. Never read from the message's text.
 */
function nextStep(code: string, hint: string | null, verb: string | undefined): string | null {
  if (hint !== null) return hint;
  if (code === 'USAGE' || code === 'INPUT_SCHEMA' || code === 'INPUT_CANONICAL') return `see \`ledger ${verb ? `${verb} ` : ''}--help\``;
  if (code === 'INPUT_TRUST' || code === 'INPUT_KEY' || code === 'INPUT_JSON') return 'fix that file; `ledger doctor` checks the whole setup';
  return null;
}

export function reportError(e: unknown, io: CliIO, json: boolean, verb?: string): number {
  let code: string;
  let message: string;
  let hint: string | null = null;
  let exit: number;
  let frames: string[] = [];
  if (e instanceof LedgerError) {
    [code, message, exit] = [e.code, e.message, e.exitCode];
    hint = nextStep(code, e.hint, verb);
  } else if ((e as Error)?.name === 'CACError') {
    [code, message, exit] = ['USAGE', (e as Error).message, EXIT.usage];
    hint = nextStep(code, null, verb);
  } else {
    [code, message, exit] = ['INTERNAL', `internal error: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`, EXIT.internal];
    // A bug report wants the stack: our own code's frames, one line each, after the message.
    const stack = e instanceof Error ? e.stack ?? '' : '';
    const at = stack.indexOf('\n    at ');
    if (at >= 0) frames = stack.slice(at + 1).split('\n');
  }
  // Policy: the message is one line, whole: a line feed in it (a value the user or a record
  // gave) is shown as an escape, so an error can never print a second, forged line.
  io.stderr(`ledger: ${neutraliseLine(message)}${hint ? `; ${neutraliseLine(hint)}` : ''}\n`);
  for (const frame of frames) io.stderr(`${neutraliseLine(frame)}\n`);
  if (json) io.stdout(neutralise(JSON.stringify({ ok: false, error: { code, message, ...(hint ? { hint } : {}) } })) + '\n');
  return exit;
}
