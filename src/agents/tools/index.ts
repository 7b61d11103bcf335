// The server's tools, in the order `tools/list` gives them: the reads an arriving agent makes
// first, then the handoff-log writes, then the gate and the log.
import { gateTool } from './gate.js';
import type { Tool } from './kit.js';
import { logTool, resumeTool, statusTool } from './read.js';
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
 * remote (SPEC 11). Remote ledgers (issue 15, src/remote/) do not exist yet, so no ledger is
 * joined and no sync tool is offered; when they land, this is where a joined ledger adds
 * `syncTool` (fetch, verify, publish what waits), and nowhere else.
 */
export function toolsFor(_dir: string): readonly Tool[] {
  return TOOLS;
}
