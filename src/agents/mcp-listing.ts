// What `ledger mcp` says before any tool runs: its answer to `initialize` (the protocol version
// it agrees to, its capabilities, who it is, the workflow in a few lines) and its `tools/list`
// (every tool with its input and output JSON Schema, made from the tools' zod schemas).
//
// Speed, for a stated target (issue 22: `ledger mcp` answers `tools/list` within 2x a bare
// `node -e ''`): the SDK and zod cost several times node's own start to load, and a client may
// send its first request before a slow server has listed its tools. So the build computes this
// listing once (src/launch/build.mjs writes `mcp-listing.json` beside the bundle and beside the
// compiled front), and the front (mcp-front.ts) answers `initialize` and `tools/list` from it
// before it loads the SDK; the SDK server then answers the same two requests again, and the front
// compares (mcp-front.ts Policy). Without the file the front hands everything to the SDK.
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { Tool } from './tools/kit.js';
import { TOOLS } from './tools/index.js';
import { syncTool } from './tools/sync.js';

/** What the server tells a client at `initialize`: the workflow in a few lines. */
export const SERVER_INSTRUCTIONS = [
  'handoff-ledger: signed, hash-chained handoffs between agents on this project. You write as the agent this server was started for; never try to write as another.',
  'Call status (or resume) first. Call start with a slug and a summary before substantive work.',
  'Call checkpoint after each verified milestone and at least every 30 minutes, with tests_cmd so the server runs the tests and records the real output, and exactly one next action.',
  'Before you stop: finish (with outcome and invariants) or release the item. Never edit HANDOFF.md or HANDOFF.yml by hand.',
].join('\n');

/** The server's name in `initialize` (its version is `ledger --version`'s). */
export const SERVER_NAME = 'handoff-ledger';

/** One tool as `tools/list` gives it. */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
  outputSchema: { type: 'object'; [k: string]: unknown };
  annotations: Record<string, unknown>;
}

/** A tool as `tools/list` gives it: JSON Schema draft-07, the one the SDK's own client validates structured results with. */
export function listTool(t: Tool): ListedTool {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input, { target: 'draft-7', io: 'input' }) as ListedTool['inputSchema'],
    outputSchema: z.toJSONSchema(t.output, { target: 'draft-7', io: 'output' }) as ListedTool['outputSchema'],
    annotations: { title: t.title, readOnlyHint: !t.writes, destructiveHint: false, idempotentHint: !t.writes, openWorldHint: false },
  };
}

/** The file the build writes (mcp-front.ts reads it): the listing, and what `initialize` needs. */
export interface McpListing {
  /** The tools every server lists, in order (tools/index.ts TOOLS). */
  tools: ListedTool[];
  /** `sync`, listed after them for a ledger joined to a remote (tools/index.ts toolsFor). */
  sync: ListedTool;
  instructions: string;
  name: string;
  /** The SDK's: a client's version is agreed to when it is one of these, else `latest`. */
  protocolVersions: string[];
  latestProtocolVersion: string;
}

export function mcpListing(): McpListing {
  return {
    tools: (TOOLS as readonly Tool[]).map(listTool),
    sync: listTool(syncTool as unknown as Tool),
    instructions: SERVER_INSTRUCTIONS,
    name: SERVER_NAME,
    protocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    latestProtocolVersion: LATEST_PROTOCOL_VERSION,
  };
}
