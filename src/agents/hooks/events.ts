// What a hook is given and what it answers, for either agent: the facts it may ask for (each
// computed only when asked, so a hook does only the work its event needs) and its answer (the
// JSON to print, or nothing; notes to leave). hooks/claude.ts and hooks/codex.ts map each agent's
// events and formats onto these; the CLI (cli/commands/agents-run.ts) does the I/O.
import type { StatusReport } from '../../handoff/status.js';
import type { NoteEvent } from '../../record.js';
import type { Currency } from '../../index.js';
import type { Unrecorded } from './rules.js';

export interface HookFacts {
  /** Who the session writes as (--agent, else LEDGER_AGENT), or null. */
  agent: string | null;
  now: Date;
  status(): StatusReport;
  /** The agent's live items whose work is not recorded (rules.ts unrecordedWork). */
  unrecorded(): Unrecorded[];
  /** How current the copy is (SPEC 11; null: not shared through a remote). A stop or a session
   *  end never acts on a copy it could not refresh (`current: false`). */
  currency: Currency | null;
  /** The agent's open items with a live lease, each with its last write's seq (for the notes). */
  ownLive(): { slug: string; sinceSeq: number }[];
  /** Whether the agent's hook already noted a session end or interruption on `slug` after `sinceSeq` (no pile-up). */
  noted(slug: string, sinceSeq: number): boolean;
}

export interface HookAnswer {
  /** The JSON object to print on stdout; null: print nothing. */
  stdout: Record<string, unknown> | null;
  /** Notes to append, best effort (session end, stop failure). */
  notes: { slug: string; text: string; event: NoteEvent }[];
}

export const SILENT: HookAnswer = { stdout: null, notes: [] };

/** A hook payload: a JSON object (anything else is not answered). */
export type Payload = Record<string, unknown>;

/** Policy: a payload that names another event than the one the hook was installed for is not answered. */
export function forEvent(payload: Payload, expected: string): boolean {
  const named = payload.hook_event_name;
  return named === undefined || named === expected;
}
