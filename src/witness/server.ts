// `ledger witness serve`: a C2SP tlog-witness over HTTP (c2sp.org/tlog-witness) for the logs its
// configuration names. The judgement is pure (../tlog/witness-protocol.ts); this file is the I/O
// around it: read the log's state, decide, cosign, persist durably, answer.
//
// Atomicity (tlog-witness: "checking the old size ... and persisting the new checkpoint must be
// performed atomically"): from the read of the state to the end of its durable write, a request
// runs synchronously on Node's one thread, with no await in between, so no other request of this
// process interleaves; and one process serves a state folder at a time (its lock, taken at start).
// The answer is sent only after the write returned: a crash before it loses an answer, never a
// size (test/witness/ kills the server between the two).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { LedgerError } from '../errors.js';
import { realFileOps } from '../fs/ops.js';
import { acquireLock, type HeldLock } from '../store/lock.js';
import { cosignatureLines, decideAddCheckpoint, type LogState } from '../tlog/witness-protocol.js';
import { ed25519NoteVerifier, formatNote, formatVkey, parseNote, type NoteSigner, type NoteVerifier } from '../tlog/note.js';
import type { WitnessConfig } from './config.js';
import { ensureLogsDir, originHash, readLogState, writeLogState, type StoredLog } from './state.js';

// Policy: a request body of at most 64 KiB plus a full consistency proof; larger is answered 413
// without reading it all. Slow clients are cut off by Node's request timeout (below).
const MAX_BODY = 65536 + 64 * 46 + 64;

export interface WitnessOptions {
  dir: string;
  config: WitnessConfig;
  cosigner: NoteSigner;
  host: string;
  port: number;
  /** Called after a state write and before its answer (tests stop the process there). */
  afterPersist?: (origin: string, size: number) => void;
  /** One line per request, for the operator (stderr in the CLI). */
  log?: (line: string) => void;
}

export interface RunningWitness {
  server: Server;
  url: string;
  vkey: string;
  close(): Promise<void>;
}

export async function startWitness(o: WitnessOptions): Promise<RunningWitness> {
  const lock: HeldLock = acquireLock(realFileOps, join(o.dir, 'lock'), 0);
  try {
    ensureLogsDir(o.dir);
  } catch (e) {
    lock.release();
    throw e;
  }
  const verifiers = new Map<string, NoteVerifier[]>();
  for (const v of o.config.logs) verifiers.set(v.name, [...(verifiers.get(v.name) ?? []), ed25519NoteVerifier(v)]);
  const memory = new Map<string, StoredLog | null>();
  const stored = (origin: string): StoredLog | null => {
    if (!memory.has(origin)) memory.set(origin, readLogState(o.dir, origin));
    return memory.get(origin)!;
  };
  const log = o.log ?? (() => {});

  const addCheckpoint = (body: string, res: ServerResponse) => {
    // From here to writeLogState: synchronous (see the header).
    let d;
    try {
      d = decideAddCheckpoint(body, (origin) => verifiers.get(origin) ?? null, (origin) => stored(origin)?.state ?? null);
    } catch (e) {
      // A corrupt state file (OP_CORRUPT): refuse, never fall back to size 0.
      log(`500 ${(e as Error).message}`);
      return answer(res, 500, 'text/plain; charset=utf-8', 'the witness cannot read its state for this log\n');
    }
    if (d.status === 409) {
      log(`409 ${d.reason}`);
      return answer(res, 409, 'text/x.tlog.size', `${d.size}\n`);
    }
    if (d.status !== 200) {
      log(`${d.status} ${d.reason}`);
      return answer(res, d.status, 'text/plain; charset=utf-8', d.reason.replace(/[^\x20-\x7e]/g, '?') + '\n');
    }
    const lines = cosignatureLines(d.note.text, [o.cosigner]);
    // What it remembers: the checkpoint with the log's signatures and its own cosignature.
    const note = formatNote({ text: d.note.text, sigs: [...d.logSigs, ...parseNote(d.note.text + '\n' + lines).sigs] });
    try {
      writeLogState(o.dir, d.state.origin, note);
    } catch (e) {
      log(`500 cannot persist: ${(e as Error).message}`);
      return answer(res, 500, 'text/plain; charset=utf-8', 'the witness cannot persist its state\n');
    }
    memory.set(d.state.origin, { state: d.state as LogState, note });
    o.afterPersist?.(d.state.origin, d.state.size);
    log(`200 ${d.state.origin} ${d.state.size}`);
    answer(res, 200, 'text/plain; charset=utf-8', lines);
  };

  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/add-checkpoint') {
      readBody(req, res, (body) => addCheckpoint(body, res));
      return;
    }
    const m = req.method === 'GET' ? /^\/([0-9a-f]{64})\/checkpoint$/.exec(req.url ?? '') : null;
    if (m) {
      const origin = [...verifiers.keys()].find((x) => originHash(x) === m[1]);
      let s: StoredLog | null = null;
      try {
        s = origin === undefined ? null : stored(origin);
      } catch {
        return answer(res, 500, 'text/plain; charset=utf-8', 'the witness cannot read its state for this log\n');
      }
      return s ? answer(res, 200, 'text/plain; charset=utf-8', s.note) : answer(res, 404, 'text/plain; charset=utf-8', 'no checkpoint cosigned for this log\n');
    }
    answer(res, 404, 'text/plain; charset=utf-8', 'not found: POST /add-checkpoint, GET /<origin hash>/checkpoint\n');
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => {
      lock.release();
      reject(new LedgerError('OP_IO', `cannot listen on ${o.host}:${o.port}: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    });
    server.listen(o.port, o.host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return {
    server,
    url: `http://${host}:${a.port}`,
    vkey: formatVkey(o.cosigner),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => {
        lock.release();
        resolve();
      });
    }),
  };
}

function answer(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Reads a request body of at most MAX_BODY bytes, answering 413 past it. */
function readBody(req: IncomingMessage, res: ServerResponse, then: (body: string) => void): void {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > 1 << 20) {
    answer(res, 413, 'text/plain; charset=utf-8', 'request too large\n');
    req.destroy();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (done) {
      // Past the limit: the rest is read and dropped (so the client sees the 413, not a reset),
      // up to 1 MiB, then the connection is cut.
      if (size > 1 << 20) req.destroy();
      return;
    }
    if (size > MAX_BODY) {
      done = true;
      chunks.length = 0;
      res.setHeader('connection', 'close');
      answer(res, 413, 'text/plain; charset=utf-8', 'request too large\n');
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    if (done) return;
    done = true;
    // The note decoder checks UTF-8 strictly; invalid bytes must not be replaced before it does.
    const buf = Buffer.concat(chunks);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(buf);
    } catch {
      answer(res, 400, 'text/plain; charset=utf-8', 'malformed request: not valid UTF-8\n');
      return;
    }
    then(text);
  });
  req.on('error', () => {
    done = true;
  });
}
