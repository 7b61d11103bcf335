// How a verb is declared. Each registration file in commands/ exports a list of declarations made
// with `verb(usage, description, exits, { plane, flags, examples, run })`: its flags as data
// (flags.ts: each declared once, for cac and for reading them back typed), its examples, and `run`,
// which `await import()`s the implementation, so nothing of a verb is loaded, and its cac command
// is not even built, unless that verb runs. createCli (cli.ts) builds only the declaration whose
// name is the first argument, or all of them for the top-level help and an unknown word. The
// verb's name is read from its usage string, so it is written once; its exit codes are data
// beside it, so its --help can never leave one out (issue 14.9).
//
// Policy (issue 22), the verbs split as git splits its commands: porcelain is what people and
// agents type (init, status, start, checkpoint, finish, release, note, resume, render, log, show,
// gate, audit, revoke, sync, trust, setup, doctor); plumbing is what scripts and other machines' code
// call (append, including --batch; head; pending; consume-failed, a deploy step's report;
// recover; keygen; mcp and hook, which agents' harnesses start). `ledger --help` lists the
// porcelain first. Plumbing output is for programs: its text and --json stay stable, a field
// added at the end at most; porcelain text is for people and may be reworded.
import type { CAC } from 'cac';
import { EXIT, EXIT_MEANINGS, type ExitName } from '../errors.js';
import { GLOBAL, type CliIO, type Global } from './commands/common.js';
import { declare, readFlags, type FlagSet, type Flags } from './flags.js';

export type Command = ReturnType<CAC['command']>;

/** What a verb's exit codes mean for that verb, by name in the one table (errors.ts EXIT). */
export type VerbExits = { ok: string } & Partial<Record<Exclude<ExitName, 'ok'>, string>>;

/** One line of a verb's "Exit codes" help. */
export interface VerbExit { code: number; meaning: string }

export type Plane = 'porcelain' | 'plumbing';

export interface VerbDeclaration {
  /** The word that names the verb (`ledger NAME ...`), the first word of its usage. */
  readonly name: string;
  /** Porcelain (people and agents type it) or plumbing (scripts and machines call it): see the Policy above. */
  readonly plane: Plane;
  /** What it does, in one line: the first thing its --help says. */
  readonly description: string;
  /** Every code it can exit with, in order, with what each means for this verb. */
  readonly exits: readonly VerbExit[];
  /** Adds the cac command: arguments, options, examples and the action. */
  declare(cli: CAC, io: CliIO): void;
}

/**
 * Policy: the codes every verb can exit with are added to each verb's own list unless it says
 * them itself: any flag or argument can be bad (2), any ledger read can find a lock, an I/O
 * error or a corrupt file (3), and a bug is a bug (1).
 */
const meaningOf = (code: number): string => EXIT_MEANINGS.find((m) => m.code === code)!.meaning;
const EVERY_VERB: Partial<Record<ExitName, string>> = {
  internal: meaningOf(EXIT.internal),
  usage: 'bad input (a flag, argument or file); nothing was changed',
  operational: meaningOf(EXIT.operational),
};

/** A verb's exit codes in order, with what each means for it (the ones every verb has added). */
function exitList(exits: VerbExits): VerbExit[] {
  const all: Partial<Record<ExitName, string>> = { ...EVERY_VERB, ...exits };
  return (Object.keys(all) as ExitName[]).map((k) => ({ code: EXIT[k], meaning: all[k]! })).sort((a, b) => a.code - b.code);
}

/** What a verb is besides its usage, description and exit codes. */
export interface VerbSpec<S extends FlagSet> {
  plane: Plane;
  /**
   * Its flags, in the order its help lists them (the global --dir and --json come with every verb).
   * Made on first use: a verb's table (spread from the shared ones, a hidden class per key in the
   * interpreter) is built only when that verb is declared, not for every verb at every start.
   */
  flags: () => S;
  examples?: readonly string[];
  /** Lets unknown flags through, and answers flags given wrongly with this instead of a refusal (the hook: no argv may make it fail). */
  lenient?: { onBadFlags: () => number };
  /** Runs it: the positional arguments as cac gives them, then the flags, typed. */
  run: (io: CliIO, args: (string | undefined)[], f: Flags<S> & Global) => Promise<number> | number;
}

/**
 * A verb: `usage` as cac takes it (`'show <ref>'`, `'append [kind]'`), its one-line description,
 * what its exit codes mean (0 at least; 1, 2 and 3 are added), its plane, flags, examples and run.
 */
export function verb<S extends FlagSet>(usage: string, description: string, exits: VerbExits, spec: VerbSpec<S>): VerbDeclaration {
  const name = usage.split(' ', 1)[0];
  // Speed: every start declares all 40 verbs (their module tops run) and builds one command; the
  // exit list (help alone reads it) and the flag tables (the declared verb alone) are made on first use.
  let list: VerbExit[] | undefined;
  return {
    name, plane: spec.plane, description,
    get exits() {
      return (list ??= exitList(exits));
    },
    declare: (cli, io) => {
      const set = spec.flags();
      const read = { ...GLOBAL, ...set };
      const c = declare(cli.command(usage, description), set);
      if (spec.lenient) c.allowUnknownOptions();
      for (const e of spec.examples ?? []) c.example(e);
      c.action((...a: unknown[]) => {
        const args = a.slice(0, -1).map((x) => (x === undefined ? undefined : String(x)));
        let f: Flags<S> & Global;
        try {
          f = readFlags(a[a.length - 1] as Record<string, unknown>, read) as Flags<S> & Global;
        } catch (e) {
          if (spec.lenient) return spec.lenient.onBadFlags();
          throw e;
        }
        return spec.run(io, args, f);
      });
    },
  };
}

/**
 * Declares on `cli` the verb named `named` when there is one, else every verb (in order: that is
 * the order of the top-level help). Why one: building every command cost each start most of a
 * millisecond, and cac's parse runs its option parser once per command to find the match (about
 * 1.5 ms more), when this was measured for issue 2.
 */
export function declareVerbs(cli: CAC, io: CliIO, verbs: readonly VerbDeclaration[], named: string | undefined): void {
  const one = named === undefined ? undefined : verbs.find((v) => v.name === named);
  for (const v of one ? [one] : verbs) v.declare(cli, io);
}
