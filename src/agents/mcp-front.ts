// `ledger mcp`'s first moments (SPEC 12): the two answers every client waits for before it uses
// a server, `initialize` and `tools/list`, given from the listing the build computed
// (mcp-listing.ts), before the MCP SDK and zod are loaded; every other message goes to the SDK's
// server (mcp-server.ts), loaded once the tools are listed or when a message needs it.
//
// Speed, for a stated target (issue 22: `ledger mcp` answers `tools/list` within 2x a bare
// `node -e ''`; loading the SDK and zod alone costs several times node's start): this module
// loads nothing but node's own modules, and stdin is read line by line until the hand-over.
//
// Policy: the SDK stays the server. At the hand-over it is given every message received so far,
// in order, the two answered ones included, so its state is what it would be had it read stdin
// from the start; its answers to those two are not sent again but compared with the ones sent,
// and a difference is logged as this server's bug (test/agents/mcp-front.test.ts keeps it at
// none). A line the front does not recognise exactly (a malformed request, a method it does not
// answer, a `cursor`) goes to the SDK, and so does everything after it, in order.
import { readFileSync } from 'node:fs';
import type { McpListing } from './mcp-listing.js';
import type { ToolContext } from './tools/kit.js';

export interface McpServeOptions {
  ctx: ToolContext;
  /** The server's version, as `ledger --version` says it. */
  version: string;
  /** One line to stderr (never stdout: it carries the protocol). */
  log: (line: string) => void;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream & { writableLength?: number };
}

/** The listing the build wrote beside this module (or beside the bundle); null when there is none. */
export function readListing(at: URL = new URL('./mcp-listing.json', import.meta.url)): McpListing | null {
  try {
    return JSON.parse(readFileSync(at, 'utf8')) as McpListing;
  } catch {
    return null;
  }
}

type Id = string | number;

const NEWLINE = Buffer.from('\n');
interface Request { jsonrpc: '2.0'; id: Id; method: string; params?: unknown }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One line as the front sees it: a request as the SDK's schema takes it (a string or integer id,
 * a method, params an object if any), a notification (a method, no id), or anything else.
 */
function messageOf(line: string): { request: Request } | { notification: true } | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isObject(v) || v.jsonrpc !== '2.0' || typeof v.method !== 'string') return null;
  if (v.params !== undefined && !isObject(v.params)) return null;
  if (!Object.hasOwn(v, 'id')) return { notification: true };
  if (!(typeof v.id === 'string' || (typeof v.id === 'number' && Number.isSafeInteger(v.id)))) return null;
  return { request: v as unknown as Request };
}

/**
 * The front's answer to `req`, or null when the SDK must answer it. Only the shapes the SDK's
 * schemas accept: `initialize` with a protocol version, capabilities and the client's name and
 * version; `tools/list` without a cursor (the listing is one page).
 */
export function earlyAnswer(req: Request, listing: McpListing, version: string, joined: boolean): unknown {
  const p = (req.params ?? {}) as Record<string, unknown>;
  if (req.method === 'initialize') {
    const client = p.clientInfo;
    if (typeof p.protocolVersion !== 'string' || !isObject(p.capabilities) || !isObject(client) || typeof client.name !== 'string' || typeof client.version !== 'string') return null;
    // As the SDK's Server agrees to a version: the client's, when supported, else the latest.
    const protocolVersion = listing.protocolVersions.includes(p.protocolVersion) ? p.protocolVersion : listing.latestProtocolVersion;
    return { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: listing.name, version }, instructions: listing.instructions };
  }
  if (req.method === 'tools/list' && p.cursor === undefined) return { tools: joined ? [...listing.tools, listing.sync] : listing.tools };
  return null;
}

/**
 * Policy: the largest message a client may send, its line feed excluded: 10 MiB less one byte, so
 * that the SDK's read buffer (10 MiB, STDIO_DEFAULT_MAX_BUFFER_SIZE), which is handed one whole
 * line at a time, never overflows. A longer line is refused with a JSON-RPC error and dropped,
 * byte by byte as it arrives (never held whole), and the session goes on (issue 23: a request
 * over 10 MB ended the server).
 */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024 - 1;

/**
 * Splits `stdin` into lines (without their line feed) of at most `max` bytes, handing each to
 * `line`; a longer one is dropped as it arrives and reported once to `oversize`. At the end, the
 * bytes after the last line feed (if any, and not too long) go to `rest`.
 */
export function boundedLines(stdin: NodeJS.ReadableStream, max: number, on: { line: (bytes: Buffer) => void; oversize: () => void; end: (rest: Buffer) => void }): void {
  let partial: Buffer[] = [];
  let held = 0;
  let dropping = false;
  stdin.on('data', (chunk: Buffer | string) => {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a)) {
      const piece = bytes.subarray(0, nl);
      bytes = bytes.subarray(nl + 1);
      if (dropping || held + piece.length > max) {
        if (!dropping) on.oversize();
        dropping = false;
      } else on.line(partial.length ? Buffer.concat([...partial, piece]) : Buffer.from(piece));
      partial = [];
      held = 0;
    }
    if (bytes.length === 0 || dropping) return;
    if (held + bytes.length > max) {
      on.oversize();
      dropping = true;
      partial = [];
      held = 0;
      return;
    }
    partial.push(Buffer.from(bytes));
    held += bytes.length;
  });
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    on.end(dropping ? Buffer.alloc(0) : Buffer.concat(partial));
  };
  stdin.once('end', end);
  stdin.once('close', end);
}

/** The answer to a message over MAX_MESSAGE_BYTES: its id cannot be read, so null (JSON-RPC 2.0). */
export const OVERSIZE_ANSWER = `${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `a message over ${MAX_MESSAGE_BYTES + 1} bytes (10 MiB) is refused; nothing was done` } })}\n`;

/** Serves the tools on stdio until the client closes stdin; every call started is answered first. */
export async function serveMcp(o: McpServeOptions): Promise<void> {
  const listing = readListing();
  const stdin = o.stdin ?? process.stdin;
  const stdout = o.stdout ?? process.stdout;
  const oversize = () => {
    o.log(`refused a message over ${MAX_MESSAGE_BYTES + 1} bytes`);
    stdout.write(OVERSIZE_ANSWER);
  };
  if (!listing) {
    // No listing (the uncompiled sources): the SDK reads every line from the start.
    const { serveSdk } = await import('./mcp-server.js');
    const pass = new (process.getBuiltinModule('node:stream').PassThrough)();
    boundedLines(stdin, MAX_MESSAGE_BYTES, { line: (l) => pass.write(Buffer.concat([l, NEWLINE])), oversize, end: (rest) => pass.end(rest) });
    return serveSdk({ ...o, stdin: pass, stdout, answered: new Map() });
  }
  o.log(`serving ${listing.tools.length + (o.ctx.joined ? 1 : 0)} tools as ${o.ctx.agent} on ${o.ctx.dir}`);
  // What was read before the hand-over: every line, and the answers given to some of them.
  const lines: string[] = [];
  const answered = new Map<Id, unknown>();
  // The bytes after the last line feed at the end: a line is decoded only whole (a line feed is
  // never part of a UTF-8 sequence), and what is left goes to the SDK as bytes.
  let partial: Buffer = Buffer.alloc(0);
  let forSdk = false;
  let ended = false;
  let feed: NodeJS.ReadWriteStream | null = null;
  let served: Promise<void> | null = null;

  return new Promise<void>((resolve, reject) => {
    const handOver = () => {
      if (served) return;
      // In the bundle the SDK and zod are required here, when mcp-server.ts first runs.
      served = import('./mcp-server.js').then(({ serveSdk }) => {
        const pass = new (process.getBuiltinModule('node:stream').PassThrough)();
        for (const l of lines) pass.write(`${l}\n`);
        if (partial.length) pass.write(partial);
        feed = pass;
        if (ended) pass.end();
        return serveSdk({ ...o, stdin: pass, stdout, answered, listed: true });
      });
      served.then(resolve, reject);
    };
    // A line the front answers itself (initialize, tools/list), or else the SDK answers from it on.
    const answerEarly = (line: string) => {
      const m = messageOf(line);
      if (m && 'notification' in m) return; // passed on at the hand-over; nothing to answer
      const answer = m && !answered.has(m.request.id) ? earlyAnswer(m.request, listing, o.version, o.ctx.joined) : null;
      if (m === null || answer === null) {
        forSdk = true;
        return;
      }
      answered.set(m.request.id, answer);
      stdout.write(`${JSON.stringify({ result: answer, jsonrpc: '2.0', id: m.request.id })}\n`);
      // Listed: the SDK loads now, so that the first call finds it ready.
      if (m.request.method === 'tools/list') setImmediate(() => ended || handOver());
    };
    const onLine = (bytes: Buffer) => {
      if (feed) {
        feed.write(Buffer.concat([bytes, NEWLINE]));
        return;
      }
      const line = bytes.toString('utf8').replace(/\r$/, '');
      lines.push(line);
      if (!forSdk && line.trim() !== '') answerEarly(line);
      if (forSdk) handOver();
    };
    const onEnd = (rest: Buffer) => {
      if (ended) return;
      ended = true;
      if (feed) feed.end(rest);
      else partial = rest;
      if (!served) {
        o.log('stdin closed; stopped');
        resolve();
      }
    };
    boundedLines(stdin, MAX_MESSAGE_BYTES, { line: onLine, oversize, end: onEnd });
  });
}
