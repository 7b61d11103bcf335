// `ledger mcp`: a Model Context Protocol server on stdio (SPEC 12), built on the official
// TypeScript SDK's low-level `Server` and `StdioServerTransport`, behind the front that answers
// `initialize` and `tools/list` before this module loads (mcp-front.ts). Every tool
// (tools/index.ts) is listed with its input and output JSON Schema (mcp-listing.ts, from its zod
// schemas), and every call is:
//   1. looked up and its arguments checked against the strict input schema: an unknown argument
//      (`agent` among them: the agent is the server's) or a wrong type is refused, one line;
//   2. run against the ledger with the server's agent and key (the workflow checks the values);
//   3. answered with `structuredContent` (summary, next_action, the tool's fields) checked against
//      the output schema, and the same JSON as text (MCP's advice for clients that read text).
// A refusal is an `isError` result whose text is the one-line reason (the CLI's message and
// hint); nothing was written. stdout carries only the protocol; every log line goes to stderr.
//
// The SDK and zod are loaded with this module, which only mcp-front.ts imports (the CLI bundle
// keeps them external and requires them when this module first runs), so no other verb pays for
// them at start-up, and `ledger mcp` not before its tools are listed. Static imports on purpose:
// the bundle runs as a vm.Script, where a dynamic import() of a package has no loader.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { LedgerError } from '../errors.js';
import { neutraliseLine } from '../text/sanitize.js';
import type { McpServeOptions } from './mcp-front.js';
import { SERVER_INSTRUCTIONS, SERVER_NAME, listTool } from './mcp-listing.js';
import type { Tool, ToolContext } from './tools/kit.js';
import type { Currency } from '../index.js';
import { toolsFor } from './tools/index.js';

export interface SdkServeOptions extends McpServeOptions {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream & { writableLength?: number };
  /** The requests the front has answered (by id), whose answers from the SDK are compared, not sent. */
  answered: Map<string | number, unknown>;
  /** The front has logged what it serves already. */
  listed?: boolean;
}

interface CallResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [k: string]: unknown;
}

/** A refusal: one line, the reason first, then what to do (the CLI's hint), as `ledger` prints it. */
export function refusal(e: unknown): { text: string; code: string } {
  if (e instanceof LedgerError) {
    const msg = e.message.split('\n')[0];
    return { text: e.hint ? `${msg}; ${e.hint}` : msg, code: e.code };
  }
  return { text: `internal error: ${((e as Error)?.message ?? String(e)).split('\n')[0]}`, code: 'INTERNAL' };
}

interface Issue { code: string; path: PropertyKey[]; message: string; keys?: string[] }

/** The first problem with a call's arguments, in one line (and how many more there are). */
export function argumentProblem(tool: string, issues: readonly Issue[]): string {
  const first = issues[0];
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  if (first.code === 'unrecognized_keys' && first.path.length === 0 && first.keys?.includes('agent')) {
    return `${tool}: "agent" is not an argument: this server writes as the agent it was started for (--agent or LEDGER_AGENT), and no tool takes another's name${more}`;
  }
  const where = first.path.length ? first.path.map(String).join('.') : 'arguments';
  return `${tool}: ${where}: ${first.message}${more}`;
}

function errorResult(text: string): CallResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * Policy: the fields a model reads as text (summary, next_action, the resume or status lines)
 * carry record text with every control, bidi or invisible code point shown as its escape, as the
 * CLI's text sinks print it (src/text/sanitize.ts); the data fields stay exact, as `--json` does.
 */
function readable(out: Record<string, unknown>): Record<string, unknown> {
  const r = { ...out };
  for (const k of ['summary', 'next_action']) if (typeof r[k] === 'string') r[k] = neutraliseLine(r[k] as string);
  if (Array.isArray(r.lines)) r.lines = (r.lines as unknown[]).map((l) => (typeof l === 'string' ? neutraliseLine(l) : l));
  return r;
}

/**
 * Issue 26.4 for a model: a slug it mistyped is answered "did you mean", as the CLI answers it,
 * and the hints name tool calls, never a `ledger start` of the mistyped slug (an agent that obeys
 * would open a second item beside the real one). With no slug close, the item does not exist:
 * the hint says how to take it, as a call. A start refused as a typo of an open item's slug names
 * the call that starts it anyway.
 */
async function namesForMcp(e: unknown, ctx: ToolContext): Promise<unknown> {
  if (!(e instanceof LedgerError) || typeof e.data.slug !== 'string') return e;
  const slug = e.data.slug;
  if (e.code === 'INPUT_REFUSED' && Array.isArray(e.data.near)) {
    return new LedgerError(e.code, e.message, e.data, `call resume with slug ${String(e.data.near[0])} to read it; to start ${slug} as a new item anyway, call start with new_item: true`);
  }
  if (e.code !== 'INPUT_NOT_FOUND') return e;
  let guess: string | null = null;
  try {
    guess = await ctx.reader().nameSuggestion(slug, 'slugs');
  } catch {
    /* no ledger to read: no suggestion */
  }
  const hint = guess ? `${guess} call status for the open items` : `call status for the open items; to take ${slug} as a new item, call start with slug ${slug} first`;
  return new LedgerError(e.code, e.message, { ...e.data, ...(guess ? { suggestion: guess } : {}) }, hint);
}

function safeCurrency(ctx: ToolContext): Currency | null {
  try {
    return ctx.currency?.() ?? null;
  } catch {
    return null;
  }
}

/** Runs one call: check the arguments, run the tool, check its answer. Never throws. */
export async function callTool(tools: readonly Tool[], ctx: ToolContext, name: string, args: unknown, log: (line: string) => void): Promise<CallResult> {
  const tool = tools.find((t) => t.name === name);
  if (!tool) return errorResult(`no tool named "${name}"; the tools are ${tools.map((t) => t.name).join(', ')}`);
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) {
    const text = argumentProblem(name, parsed.error.issues as unknown as Issue[]);
    log(`${name}: refused: ${text}`);
    return errorResult(text);
  }
  let out: unknown;
  // SPEC 11: a reading tool answers from a copy brought to the remote first (within the budget);
  // a write refreshes as it publishes, and says how current it is after.
  const before = tool.writes ? null : ((await ctx.current?.()) ?? null);
  try {
    out = await tool.run(ctx, parsed.data, before);
  } catch (e) {
    const r = refusal(await namesForMcp(e, ctx));
    log(`${name}: refused (${r.code}): ${r.text}`);
    if (r.code === 'INTERNAL') log(`${name}: ${(e as Error)?.stack ?? String(e)}`);
    return errorResult(r.text);
  }
  const checked = tool.output.safeParse(out);
  if (!checked.success) {
    // A bug of this server, not of the call: said as such, with the first problem.
    const text = `internal error: the ${name} tool's answer does not match its output schema (${argumentProblem(name, checked.error.issues as unknown as Issue[])})`;
    log(text);
    return errorResult(text);
  }
  const currency = before ?? (tool.writes ? (safeCurrency(ctx) ?? null) : null);
  const structured = readable({ ...(checked.data as Record<string, unknown>), ...(ctx.joined ? { currency } : {}) });
  if (currency && !currency.current && typeof structured.summary === 'string') structured.summary = `NOT CURRENT (${currency.reason}): ${structured.summary}`;
  log(`${name}: ok: ${String(structured.summary)}`);
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/**
 * Serves the tools on `o.stdin` until it ends; every call started is answered first. The requests
 * in `o.answered` were answered by the front: the SDK's answer to each is compared with the one
 * sent, and dropped.
 */
export async function serveSdk(o: SdkServeOptions): Promise<void> {
  const tools = toolsFor(o.ctx);
  const listed = tools.map(listTool);
  const server = new Server({ name: SERVER_NAME, version: o.version }, { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => callTool(tools, o.ctx, req.params.name, req.params.arguments, o.log));
  server.onerror = (e) => o.log(`protocol error: ${e.message}`);
  const { stdin, stdout } = o;
  const transport = new StdioServerTransport(stdin as never, stdout as never);
  const ended = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdin.once('close', resolve);
    transport.onclose = resolve;
  });
  await server.connect(transport);
  // Every request received is counted until its answer is written, so one that arrives just
  // before stdin ends is answered too (the SDK dispatches a request a tick after reading it).
  const pending = new Set<string | number>();
  let drained: (() => void) | null = null;
  const receive = transport.onmessage!;
  transport.onmessage = (m) => {
    if ('method' in m && 'id' in m) pending.add(m.id);
    receive(m);
  };
  const send = transport.send.bind(transport);
  transport.send = async (m) => {
    const answer = !('method' in m) && 'id' in m && m.id !== undefined ? m.id : undefined;
    if (answer !== undefined && o.answered.has(answer)) {
      // Answered by the front already: the same answer, or this server's bug, said on stderr.
      const early = o.answered.get(answer);
      o.answered.delete(answer);
      if (!('result' in m) || JSON.stringify(m.result) !== JSON.stringify(early)) o.log(`internal error: the early answer to request ${JSON.stringify(answer)} differs from the SDK's`);
    } else await send(m);
    if (answer !== undefined && pending.delete(answer) && pending.size === 0) drained?.();
  };
  if (!o.listed) o.log(`serving ${tools.length} tools as ${o.ctx.agent} on ${o.ctx.dir}`);
  await ended;
  // Policy: a call that was running when the client hung up (a test suite under tests_cmd) is
  // finished and answered, so the ledger never holds half of what the agent asked for. The answer
  // is written (the pipe took it) before the process may exit.
  if (pending.size > 0) await new Promise<void>((resolve) => (drained = resolve));
  await server.close().catch(() => {});
  o.log('stdin closed; stopped');
}
