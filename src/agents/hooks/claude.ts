// `ledger hook claude EVENT`: Claude Code's hook formats (sources in ../README.md).
//   session-start  SessionStart (source startup, resume, clear or compact: after a compaction it
//                  fires again with source "compact"): {"hookSpecificOutput": {"hookEventName":
//                  "SessionStart", "additionalContext": TEXT}}
//   stop           Stop: {"decision": "block", "reason": TEXT}, or nothing; never when the input
//                  says "stop_hook_active": true (Claude is already continuing for a stop hook)
//   session-end    SessionEnd (reason clear, logout, prompt_input_exit, other ...): its output is
//                  not read and it cannot block; the answer is only the notes to leave
import { forEvent, SILENT, type HookAnswer, type HookFacts, type Payload } from './events.js';
import { sessionContext, sessionEndNote, stopReason } from './rules.js';

export const CLAUDE_EVENTS = { 'session-start': 'SessionStart', stop: 'Stop', 'session-end': 'SessionEnd' } as const;
export type ClaudeEvent = keyof typeof CLAUDE_EVENTS;

export function isClaudeEvent(e: string): e is ClaudeEvent {
  return Object.hasOwn(CLAUDE_EVENTS, e);
}

export function claudeHook(event: ClaudeEvent, payload: Payload, facts: HookFacts): HookAnswer {
  if (!forEvent(payload, CLAUDE_EVENTS[event])) return SILENT;
  switch (event) {
    case 'session-start':
      return { stdout: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: sessionContext(facts.status(), facts.agent) } }, notes: [] };
    case 'stop': {
      if (payload.stop_hook_active === true || facts.agent === null) return SILENT;
      const open = facts.unrecorded();
      return open.length ? { stdout: { decision: 'block', reason: stopReason(open, facts.now) }, notes: [] } : SILENT;
    }
    case 'session-end': {
      if (facts.agent === null) return SILENT;
      const reason = typeof payload.reason === 'string' ? payload.reason : null;
      return { stdout: null, notes: facts.unrecorded().map((u) => ({ slug: u.slug, text: sessionEndNote(u, reason, facts.now) })) };
    }
  }
}
