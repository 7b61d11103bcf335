// `ledger hook claude EVENT`: Claude Code's hook formats (sources in ../README.md).
//   session-start  SessionStart (source startup, resume, clear or compact: after a compaction it
//                  fires again with source "compact"): {"hookSpecificOutput": {"hookEventName":
//                  "SessionStart", "additionalContext": TEXT}}
//   stop           Stop: {"decision": "block", "reason": TEXT}, or nothing; never when the input
//                  says "stop_hook_active": true (Claude is already continuing for a stop hook)
//   session-end    SessionEnd (reason clear, logout, prompt_input_exit, other ...): its output is
//                  not read and it cannot block; the answer is only the notes to leave
//   stop-failure   StopFailure (the turn ended on an API error: error rate_limit, overloaded,
//                  billing_error ..., error_details its message): output and exit code are
//                  ignored; a note ("interrupted") on each of the agent's live items, so the next
//                  agent sees why the owner stopped and may take it over (issue 24.4)
// SPEC 11/12: stop, session end and stop failure act only on a copy the hook could refresh (a
// stale one: silence), and a session's end or interruption is noted once per item after its
// owner's last write (the notes do not pile up).
import { forEvent, SILENT, type HookAnswer, type HookFacts, type Payload } from './events.js';
import { interruptedNote, sessionContext, sessionEndNote, stopReason } from './rules.js';

export const CLAUDE_EVENTS = { 'session-start': 'SessionStart', stop: 'Stop', 'session-end': 'SessionEnd', 'stop-failure': 'StopFailure' } as const;
export type ClaudeEvent = keyof typeof CLAUDE_EVENTS;

export function isClaudeEvent(e: string): e is ClaudeEvent {
  return Object.hasOwn(CLAUDE_EVENTS, e);
}

export function claudeHook(event: ClaudeEvent, payload: Payload, facts: HookFacts): HookAnswer {
  if (!forEvent(payload, CLAUDE_EVENTS[event])) return SILENT;
  switch (event) {
    case 'session-start':
      return { stdout: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: sessionContext(facts.status(), facts.agent, facts.currency) } }, notes: [] };
    case 'stop': {
      if (payload.stop_hook_active === true || facts.agent === null || facts.currency?.current === false) return SILENT;
      const open = facts.unrecorded();
      return open.length ? { stdout: { decision: 'block', reason: stopReason(open, facts.now) }, notes: [] } : SILENT;
    }
    case 'session-end': {
      if (facts.agent === null || facts.currency?.current === false) return SILENT;
      const reason = typeof payload.reason === 'string' ? payload.reason : null;
      const notes = facts.unrecorded().filter((u) => !facts.noted(u.slug, u.since.seq)).map((u) => ({ slug: u.slug, text: sessionEndNote(u, reason, facts.now), event: 'session-end' as const }));
      return { stdout: null, notes };
    }
    case 'stop-failure': {
      if (facts.agent === null || facts.currency?.current === false) return SILENT;
      const error = typeof payload.error === 'string' ? payload.error : typeof payload.error_type === 'string' ? payload.error_type : null;
      // Claude Code 2.1 sends `error` and, when it has one, `error_details`; its last message
      // (the API error's text, as the session showed it) says the rest.
      const details = typeof payload.error_details === 'string' ? payload.error_details : typeof payload.error_message === 'string' ? payload.error_message : typeof payload.last_assistant_message === 'string' ? payload.last_assistant_message : null;
      const open = new Map(facts.unrecorded().map((u) => [u.slug, u]));
      const notes = facts.ownLive().filter((i) => !facts.noted(i.slug, i.sinceSeq)).map((i) => ({ slug: i.slug, text: interruptedNote(error, details, open.get(i.slug) ?? null, facts.now), event: 'interrupted' as const }));
      return { stdout: null, notes };
    }
  }
}
