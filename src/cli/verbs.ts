// How a verb is declared. Each registration file in commands/ exports a list of declarations made
// with `verb(usage, description, define)`: `define` adds the verb's options and examples and an
// action that `await import()`s the implementation, so nothing of a verb is loaded, and its cac
// command is not even built, unless that verb runs. createCli (cli.ts) builds only the declaration
// whose name is the first argument, or all of them for the top-level help and an unknown word.
// The verb's name is read from its usage string, so it is written once.
import type { CAC } from 'cac';
import type { CliIO } from './commands/common.js';

export type Command = ReturnType<CAC['command']>;

export interface VerbDeclaration {
  /** The word that names the verb (`ledger NAME ...`), the first word of its usage. */
  readonly name: string;
  /** Adds the cac command: arguments, options, examples and the action. */
  declare(cli: CAC, io: CliIO): void;
}

/**
 * A verb: `usage` as cac takes it (`'show <ref>'`, `'append [kind]'`), its one-line description,
 * and `define`, which adds the options, examples and action to the command it is handed.
 */
export function verb(usage: string, description: string, define: (command: Command, io: CliIO) => void): VerbDeclaration {
  const name = usage.split(' ', 1)[0];
  return { name, declare: (cli, io) => define(cli.command(usage, description), io) };
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
