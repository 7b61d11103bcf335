// How a verb is declared. Each registration file in commands/ exports a list of declarations made
// with `verb(usage, description, exits, define)`: `define` adds the verb's options and examples
// and an action that `await import()`s the implementation, so nothing of a verb is loaded, and
// its cac command is not even built, unless that verb runs. createCli (cli.ts) builds only the
// declaration whose name is the first argument, or all of them for the top-level help and an
// unknown word. The verb's name is read from its usage string, so it is written once; its exit
// codes are data beside it, so its --help can never leave one out (issue 14.9).
import type { CAC } from 'cac';
import { EXIT, EXIT_MEANINGS, type ExitName } from '../errors.js';
import type { CliIO } from './commands/common.js';

export type Command = ReturnType<CAC['command']>;

/** What a verb's exit codes mean for that verb, by name in the one table (errors.ts EXIT). */
export type VerbExits = { ok: string } & Partial<Record<Exclude<ExitName, 'ok'>, string>>;

/** One line of a verb's "Exit codes" help. */
export interface VerbExit { code: number; meaning: string }

export interface VerbDeclaration {
  /** The word that names the verb (`ledger NAME ...`), the first word of its usage. */
  readonly name: string;
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

/**
 * A verb: `usage` as cac takes it (`'show <ref>'`, `'append [kind]'`), its one-line description,
 * what its exit codes mean (0 at least; 1, 2 and 3 are added), and `define`, which adds the
 * options, examples and action to the command it is handed.
 */
export function verb(usage: string, description: string, exits: VerbExits, define: (command: Command, io: CliIO) => void): VerbDeclaration {
  const name = usage.split(' ', 1)[0];
  const all: Partial<Record<ExitName, string>> = { ...EVERY_VERB, ...exits };
  const list = (Object.keys(all) as ExitName[]).map((k) => ({ code: EXIT[k], meaning: all[k]! })).sort((a, b) => a.code - b.code);
  return { name, description, exits: list, declare: (cli, io) => define(cli.command(usage, description), io) };
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
