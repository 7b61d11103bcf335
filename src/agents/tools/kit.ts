// What every MCP tool shares: the context the server fixed at start (who the agent is, which
// ledger, which key), the shape of a tool (input and output zod schemas, a run function), and the
// few argument readers the command line's flag readers would give (durations, evidence).
//
// The agent's name is never an argument: it is `ctx.agent`, fixed when the server started
// (`--agent` or LEDGER_AGENT), and every input schema is a strict object, so an `agent` argument
// is refused like any other unknown one (SPEC 12).
//
// Policy: zod checks the shape the listing publishes (types, which fields, simple bounds); a
// tool's arguments then become the verb's request (../../requests/), the one the command line
// builds from its flags, checked once by the same functions before anything runs or is written,
// so a refused call carries the same one-line reason as `ledger` would print.
import * as z from 'zod';
import type { Ledger } from '../../ledger.js';
import type { Currency } from '../../index.js';
import { ID_RE, NAME_RE, OUTCOMES } from '../../record.js';

/** What the server decided at start, for every call. */
export interface ToolContext {
  /** Who writes: the server's agent, never a tool argument. */
  readonly agent: string;
  /** The ledger directory and the project root (the folder that holds it). */
  readonly dir: string;
  readonly root: string;
  /** Where the server runs (relative evidence paths start there, as on the command line). */
  readonly cwd: string;
  readonly env: Record<string, string | undefined>;
  readonly trustPath: string;
  /** The ledger for reading (no key). */
  reader(): Ledger;
  /** The ledger with the server's key; throws the key's own error when the server has none. */
  writer(): Ledger;
  /** Whether the server holds a usable key (writer() would not throw for the key). */
  hasKey(): boolean;
  /** Whether the ledger is joined to a git remote on this machine (SPEC 11), as found at start. */
  readonly joined: boolean;
  /**
   * SPEC 11: brings the local copy to the remote within the read budget before a reading tool
   * answers, and says how current it is (null: not joined). The long-lived server so answers
   * every call from a copy as fresh as the remote allows, never from the one it started with.
   */
  current?(): Promise<Currency | null>;
  /** How current the local copy is now, without the network (after a write published). */
  currency?(): Currency | null;
}

/** Every successful result: the summary, exactly one next action, and the tool's own fields. */
export const ANSWER = {
  ok: z.literal(true),
  summary: z.string().describe('What happened, in one or two sentences'),
  next_action: z.string().describe('The one thing to do next'),
  currency: z
    .looseObject({ remote: z.string(), current: z.boolean(), seq: z.number().nullable(), commit: z.string().nullable(), fetched_at: z.string().nullable(), reason: z.string().nullable() })
    .nullable()
    .optional()
    .describe('In a ledger shared through a git remote: how current this answer is (current: fetched and verified for it; else why not, and when this machine last fetched)'),
};

/** What a tool's run returns: the answer's fields (the output schema is the exact contract). */
export interface ToolOutput { ok: true; summary: string; next_action: string; [field: string]: unknown }

export interface Tool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly title: string;
  /** What the tool does and when to call it: what an agent acts on. */
  readonly description: string;
  readonly input: I;
  readonly output: O;
  /** Whether the tool appends to the ledger (its annotations say so to the client). */
  readonly writes: boolean;
  /** The answer; checked against `output` before it is sent (a mismatch is this server's bug). */
  run(ctx: ToolContext, args: z.output<I>, currency?: Currency | null): Promise<ToolOutput>;
}

/** Declares a tool with its types tied to its schemas. */
export function tool<I extends z.ZodObject, O extends z.ZodObject>(t: Tool<I, O>): Tool<I, O> {
  return t;
}

// Argument schemas, named as the command line's flags in snake_case (SPEC 12).
export const slugArg = z.string().regex(ID_RE).describe("The work item's slug (its logical_operation_id): 1-128 chars of [A-Za-z0-9._:-]");
export const textArg = (what: string) => z.string().max(4096).describe(`${what} (1-4096 chars)`);
export const itemsArg = (what: string) => z.array(z.string().max(1024)).max(64).describe(`${what} (at most 64 items of 1-1024 chars)`);
export const durationArg = (what: string) => z.string().regex(/^\d{1,9}(ms|s|m|h|d)$/).describe(`${what}: a duration like 90s, 45m, 24h or 7d`);
export const outcomeArg = z.enum(OUTCOMES);
export const evidenceArg = z
  .record(z.string().regex(NAME_RE), z.string().min(1).max(1024))
  .describe('Evidence, digested now: { name: source }, source a path, file:PATH, dir:PATH, git:REV or sha256:HEX, inside the project');

/** A short record id for summaries (the full one is in the result's `id`). */
export const shortId = (id: string) => `${id.slice(0, 19)}…`;
