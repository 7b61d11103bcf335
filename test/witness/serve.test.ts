// `ledger witness init|serve` as real processes on 127.0.0.1 (SPEC 13, issue 27): the C2SP
// tlog-witness add-checkpoint answers, the durable state, a SIGKILL between the state write and
// the answer, and bad input that changes nothing. No result depends on timing: every wait is for
// an event (a line printed, a process exit, an answer).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitCheckpoint } from '../../src/witness/client.js';
import { cosignatureTime, cosignatureVerifier } from '../../src/tlog/cosignature.js';
import { openNote, parseNote, parseVkey, signNote } from '../../src/tlog/note.js';
import { formatCheckpoint } from '../../src/tlog/checkpoint.js';
import { formatAddCheckpoint } from '../../src/tlog/witness-protocol.js';
import { leafHash } from '../../src/tlog/hash.js';
import { originHash } from '../../src/witness/state.js';
import { ROOT, scratch, spawnLedgerSync } from '../helpers/cli.js';
import { TestLog } from './helpers/log.js';
import { lineOf, serveWitness } from './helpers/serve.js';

const ORIGIN = 'handoff-ledger/' + 'ab'.repeat(32);
const HELD = join(ROOT, 'dist/test/witness/helpers/held-witness.js');

interface Answer { status: number; type: string; body: string }
function post(url: string, body: string | Buffer, path = '/add-checkpoint', method = 'POST'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const serve = serveWitness;

function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill(signal);
  });
}

/** Every file of the witness's state folder, by name, with its bytes. */
function stateFiles(state: string): Record<string, string> {
  const out: Record<string, string> = {};
  const logs = join(state, 'logs');
  for (const f of existsSync(logs) ? readdirSync(logs) : []) out[f] = readFileSync(join(logs, f), 'utf8');
  return out;
}

describe('ledger witness init', () => {
  it('writes the key (0600) and witness.conf, prints the cosignature/v1 vkey, and never overwrites', () => {
    const s = scratch('witness-init-');
    try {
      const log = new TestLog(ORIGIN);
      const state = join(s.dir, 'w');
      const r = spawnLedgerSync(['witness', 'init', '--state', state, '--name', 'witness.test/w1', '--log', log.vkey], { cwd: s.dir });
      expect(r.code, r.stderr).toBe(0);
      const vkey = parseVkey(r.stdout.trim());
      expect([vkey.name, vkey.type]).toEqual(['witness.test/w1', 0x04]);
      expect(readFileSync(join(state, 'witness.conf'), 'utf8')).toContain(`log ${log.vkey}`);
      const before = readFileSync(join(state, 'witness.key'));
      const again = spawnLedgerSync(['witness', 'init', '--state', state, '--name', 'witness.test/w2'], { cwd: s.dir });
      expect(again.code).toBe(2);
      expect(readFileSync(join(state, 'witness.key'))).toEqual(before);
      for (const bad of [['--name', 'has space'], ['--name', 'a+b'], ['--name', 'w', '--log', 'nope'], ['--name', 'w', '--log', vkey.name + '+00000000+AAAA']]) {
        const b = spawnLedgerSync(['witness', 'init', '--state', join(s.dir, 'x'), ...bad], { cwd: s.dir });
        expect(b.code, bad.join(' ')).toBe(2);
        expect(b.stderr.trim().split('\n').length, b.stderr).toBeLessThanOrEqual(2);
        expect(existsSync(join(s.dir, 'x')), bad.join(' ')).toBe(false);
      }
    } finally {
      s.cleanup();
    }
  });
});

describe('when a witness serves on 127.0.0.1', () => {
  const s = scratch('witness-serve-');
  const state = join(s.dir, 'w');
  const log = new TestLog(ORIGIN);
  let child: ChildProcess;
  let url: string;
  let verifier: ReturnType<typeof cosignatureVerifier>;

  beforeAll(async () => {
    const r = spawnLedgerSync(['witness', 'init', '--state', state, '--name', 'witness.test/w1', '--log', log.vkey], { cwd: s.dir });
    expect(r.code, r.stderr).toBe(0);
    verifier = cosignatureVerifier(parseVkey(r.stdout.trim()));
    const w = serve(state);
    child = w.child;
    url = await w.url;
  });
  afterAll(async () => {
    await stop(child);
    s.cleanup();
  });

  const cosigned = (a: Answer, text: string) => {
    expect(a.status, a.body).toBe(200);
    const o = openNote(parseNote(text + '\n' + a.body), [verifier]);
    expect(o.verified.length).toBe(1);
    return cosignatureTime(o.verified[0].sig.sig)!;
  };

  it('cosigns a first checkpoint (old 0) and then an extension with its consistency proof', async () => {
    log.append(3);
    const t1 = cosigned(await post(url, log.request(0)), parseNote(log.checkpoint()).text);
    expect(t1).toBeGreaterThan(1_700_000_000);
    log.append(4);
    cosigned(await post(url, log.request(3)), parseNote(log.checkpoint()).text);
    // The monitoring endpoint serves what it cosigned: the log's signature and its own.
    const g = await post(url, '', `/${originHash(ORIGIN)}/checkpoint`, 'GET');
    expect(g.status).toBe(200);
    const o = openNote(parseNote(g.body), [verifier]);
    expect(o.verified.length).toBe(1);
    expect(o.text).toBe(parseNote(log.checkpoint(7)).text);
  });

  it('answers 409 with its latest size to a smaller tree and to an equal one with another root, and cosigns neither', async () => {
    const before = stateFiles(state);
    // The log rewound to size 5 (as someone who moved the ref would present it).
    const smaller = await post(url, log.request(0, 5));
    expect([smaller.status, smaller.type, smaller.body]).toEqual([409, 'text/x.tlog.size', '7\n']);
    const small2 = await post(url, formatAddCheckpoint({ oldSize: 5, proof: [], checkpointNote: log.checkpoint(5) }));
    expect([small2.status, small2.body]).toEqual([409, '7\n']);
    // Another tree of the same size 7 (different records), signed by the log's key.
    const other = new TestLog(ORIGIN, 1, 'forked ').append(7);
    const eq = await post(url, other.request(0));
    expect([eq.status, eq.body]).toEqual([409, '7\n']);
    // Told the right old size, C2SP answers the equal-but-different tree 422.
    const eq2 = await post(url, formatAddCheckpoint({ oldSize: 7, proof: [], checkpointNote: other.checkpoint() }));
    expect(eq2.status).toBe(422);
    // And a smaller tree from the right old size is a bad request (old > new).
    expect((await post(url, formatAddCheckpoint({ oldSize: 7, proof: [], checkpointNote: log.checkpoint(5) }))).status).toBe(400);
    expect(stateFiles(state)).toEqual(before);
  });

  it('refuses bad input with the protocol\'s status and writes nothing', async () => {
    const before = stateFiles(state);
    const stranger = new TestLog(ORIGIN, 9).append(9);
    const unknownOrigin = new TestLog('handoff-ledger/' + 'cd'.repeat(32)).append(2);
    log.append(1);
    const good = log.request(7);
    const cases: [string, string | Buffer, number][] = [
      ['not a request', 'hello', 400],
      ['no blank line', 'old 7\n', 400],
      ['leading zero', good.replace('old 7', 'old 07'), 400],
      ['bad proof line', good.replace(/\n\n/, '\n!!!!\n\n'), 400],
      ['not UTF-8', Buffer.concat([Buffer.from(good), Buffer.from([0xff])]), 400],
      ['truncated note', good.slice(0, -3), 400],
      ['a stranger\'s key, same origin', stranger.request(0), 403],
      ['a corrupted log signature', good.replace(/— (\S+) (....)/, (_m, n: string, b: string) => `— ${n} ${b === 'AAAA' ? 'BBBB' : 'AAAA'}`), 403],
      ['an unknown origin', unknownOrigin.request(0), 404],
      ['a wrong proof', formatAddCheckpoint({ oldSize: 7, proof: [leafHash('x')], checkpointNote: log.checkpoint() }), 422],
      ['a proof from size 0', formatAddCheckpoint({ oldSize: 0, proof: [leafHash('x')], checkpointNote: log.checkpoint() }), 409],
      ['too large', 'old 0\n' + 'A'.repeat(200_000), 413],
    ];
    for (const [name, body, status] of cases) {
      const a = await post(url, body);
      expect(a.status, `${name}: ${a.body}`).toBe(status);
      expect(a.body.split('\n').filter(Boolean).length, name).toBeLessThanOrEqual(1);
    }
    const size0 = signNote(formatCheckpoint({ origin: ORIGIN, size: 0, root: leafHash('not empty') }), [log.signer]);
    expect((await post(url, formatAddCheckpoint({ oldSize: 0, proof: [], checkpointNote: size0 }))).status).toBe(409);
    expect(stateFiles(state)).toEqual(before);
    // The good request still goes through afterwards.
    expect((await post(url, good)).status).toBe(200);
  });
});

describe('when the witness is SIGKILLed between its state write and its answer', () => {
  it('remembers the size after a restart, and never cosigns a smaller tree', async () => {
    const s = scratch('witness-crash-');
    const state = join(s.dir, 'w');
    const log = new TestLog(ORIGIN).append(9);
    try {
      const r = spawnLedgerSync(['witness', 'init', '--state', state, '--name', 'witness.test/w1', '--log', log.vkey], { cwd: s.dir });
      expect(r.code, r.stderr).toBe(0);
      const first = serve(state);
      const url1 = await first.url;
      expect((await post(url1, log.request(0, 4))).status).toBe(200);
      await stop(first.child);

      // The held witness: it persists size 9, prints, and blocks before answering.
      const held = spawn(process.execPath, [HELD, state], { stdio: ['ignore', 'pipe', 'pipe'] });
      const heldUrl = await lineOf(held, /^http:/);
      const answered = post(heldUrl, log.request(4, 9)).then(() => 'answered', () => 'no answer');
      await lineOf(held, /^persisted 9$/);
      await stop(held, 'SIGKILL');
      expect(await answered).toBe('no answer');

      const again = serve(state);
      const url2 = await again.url;
      try {
        // The client never got its cosignature, so it retries from 4: told 9.
        expect(await post(url2, log.request(4, 9))).toMatchObject({ status: 409, body: '9\n' });
        for (const [old, size] of [[4, 6], [0, 8], [0, 3], [4, 4]]) {
          const a = await post(url2, log.request(old, size));
          expect([a.status, a.body], `${old} -> ${size}`).toEqual([409, '9\n']);
        }
        expect((await post(url2, formatAddCheckpoint({ oldSize: 9, proof: [], checkpointNote: log.checkpoint(6) }))).status).toBe(400);
        // The checkpoint of 9 itself, from 9: cosigned (the same tree).
        expect((await post(url2, log.request(9, 9))).status).toBe(200);
      } finally {
        await stop(again.child);
      }
    } finally {
      s.cleanup();
    }
  });
});

describe('when a witness does not answer', () => {
  it('counts as absent: a connection refused, and one that is never answered', async () => {
    const silent: NetServer = createNetServer(() => {
      /* accepts and never answers */
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      const a = await submitCheckpoint(`http://127.0.0.1:${port}`, 'old 0\n\n', 200);
      expect(a.kind).toBe('absent');
      const closed = createNetServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const closedPort = (closed.address() as { port: number }).port;
      await new Promise<void>((r) => closed.close(() => r()));
      expect((await submitCheckpoint(`http://127.0.0.1:${closedPort}`, 'old 0\n\n', 5000)).kind).toBe('absent');
      expect((await submitCheckpoint('ftp://127.0.0.1/', 'old 0\n\n', 5000)).kind).toBe('absent');
    } finally {
      silent.close();
    }
  });
});
