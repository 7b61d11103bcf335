// A verb's flags, declared once: each flag's name (its key, camel-cased as cac keys it), what it
// takes and its help line. From that one declaration the verb's cac options are added (`declare`)
// and cac's loose values are read back as typed ones (`readFlags`): a string or undefined, a list,
// or a boolean, each refused with exit 2 and one line when given wrongly. A verb's implementation
// then reads `f.done`, never `opts['done']`, and turns the flags into its request (../requests/).
import type { CAC } from 'cac';
import { LedgerError } from '../errors.js';

type Command = ReturnType<CAC['command']>;

/**
 * What a flag takes:
 *   one   at most one value, not empty ("--x needs a value")
 *   text  at most one value, empty kept as "" (the request's check says "--x is empty")
 *   many  every value, in order, none empty
 *   all   every value, in order, empty ones kept (a rule that counts them: --next)
 *   bool  a switch
 */
export type FlagKind = 'one' | 'text' | 'many' | 'all' | 'bool';

export interface Flag<K extends FlagKind = FlagKind> {
  readonly kind: K;
  /** The value's name in the help (`<text>`); none for a switch. */
  readonly value: string;
  readonly help: string;
}

export const one = (value: string, help: string): Flag<'one'> => ({ kind: 'one', value, help });
export const text = (value: string, help: string): Flag<'text'> => ({ kind: 'text', value, help });
export const many = (value: string, help: string): Flag<'many'> => ({ kind: 'many', value, help });
export const all = (value: string, help: string): Flag<'all'> => ({ kind: 'all', value, help });
export const bool = (help: string): Flag<'bool'> => ({ kind: 'bool', value: '', help });

/** A verb's flags, by the key cac gives each (`testsCmd` is `--tests-cmd`), in the order its help lists them. */
export type FlagSet = Readonly<Record<string, Flag>>;

/** The typed values of a flag set. */
export type Flags<S extends FlagSet> = {
  readonly [K in keyof S]: S[K]['kind'] extends 'many' | 'all' ? string[] : S[K]['kind'] extends 'bool' ? boolean : string | undefined;
};

/** `testsCmd` -> `tests-cmd`: the flag as typed. */
export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

/** Adds the flags of `set` to a command, in order (a value flag is read as text: see cli.ts restoreRawValues). */
export function declare(c: Command, set: FlagSet): Command {
  for (const [key, f] of Object.entries(set)) {
    if (f.kind === 'bool') c.option(`--${kebab(key)}`, f.help);
    else c.option(`--${kebab(key)} ${f.value}`, f.help, { type: [String] });
  }
  return c;
}

/** Every value cac parsed for `key`, as a list. */
function values(opts: Record<string, unknown>, key: string): unknown[] {
  const v = opts[key];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function read(opts: Record<string, unknown>, key: string, kind: FlagKind): string | string[] | boolean | undefined {
  const flag = kebab(key);
  const vs = values(opts, key);
  switch (kind) {
    case 'bool':
      return vs.length > 0 && vs[vs.length - 1] !== false;
    case 'one':
    case 'text': {
      if (vs.length > 1) throw new LedgerError('USAGE', `--${flag} was given ${vs.length} times; it takes one value`);
      if (vs.length === 0) return undefined;
      const s = vs[0];
      if (kind === 'text') return typeof s === 'boolean' ? '' : String(s);
      if (typeof s === 'boolean' || s === '') throw new LedgerError('USAGE', `--${flag} needs a value`);
      return String(s);
    }
    case 'many':
      return vs.map((s) => {
        if (typeof s === 'boolean' || s === '') throw new LedgerError('USAGE', `--${flag} needs a value`);
        return String(s);
      });
    case 'all':
      return vs.map((s) => (typeof s === 'boolean' ? '' : String(s)));
  }
}

/** The typed values of `set` in cac's `opts`, each checked as its kind says (exit 2, one line). */
export function readFlags<S extends FlagSet>(opts: Record<string, unknown>, set: S): Flags<S> {
  const out: Record<string, unknown> = {};
  for (const [key, f] of Object.entries(set)) out[key] = read(opts, key, f.kind);
  return out as Flags<S>;
}
