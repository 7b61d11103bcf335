// The server's tools, in the order `tools/list` gives them: the reads an arriving agent makes
// first, then the handoff-log writes, then the gate and the log.
import { gateTool } from './gate.js';
import type { Tool, ToolContext } from './kit.js';
import { logTool, resumeTool, statusTool } from './read.js';
import { syncTool } from './sync.js';
import { checkpointTool, finishTool, noteTool, releaseTool, startTool } from './work.js';

export const TOOLS: readonly Tool[] = [
  statusTool,
  resumeTool,
  startTool,
  checkpointTool,
  finishTool,
  releaseTool,
  noteTool,
  gateTool,
  logTool,
] as unknown as readonly Tool[];

/**
 * The tools of a server on this ledger. SPEC 12: `sync` is listed only for a ledger joined to a
 * remote (SPEC 11), after `log`. Policy: decided once, when the server starts (as its agent and
 * key are): a ledger joined later gets `sync` when its server is restarted; a ledger left (the
 * state directory's join removed) while the server runs has its sync refused, one line.
 */
export function toolsFor(ctx: Pick<ToolContext, 'joined'>): readonly Tool[] {
  return ctx.joined ? [...TOOLS, syncTool as unknown as Tool] : TOOLS;
}
