// The log's side of tlog-witness: submitting a checkpoint to a witness's add-checkpoint. A witness
// that does not answer within the time given counts as absent (issue 27: it delays nothing).
import { request, Agent } from 'node:http';
import { parseDecimal } from '../tlog/hash.js';

export type WitnessAnswer =
  | { kind: 'cosigned'; lines: string }
  | { kind: 'conflict'; size: number }
  | { kind: 'refused'; status: number; reason: string }
  | { kind: 'absent'; reason: string };

// Policy: an answer of more than 64 KiB is not read further, and counts as absent.
const MAX_ANSWER = 65536;

/** Keep-alive connections (tlog-witness: clients SHOULD use them). */
export const witnessAgent = new Agent({ keepAlive: true, maxSockets: 4 });

/**
 * POSTs `body` to `<url>/add-checkpoint`. Never throws: a refused connection, a timeout, a reset
 * or an answer that is not one the protocol gives is `absent` or `refused`, with why.
 * Attacker-controlled: the answer; the caller verifies the cosignature lines it gets.
 */
export function submitCheckpoint(url: string, body: string, timeoutMs: number, agent: Agent = witnessAgent): Promise<WitnessAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: WitnessAnswer) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(a);
      }
    };
    let target: URL;
    try {
      target = new URL(url.replace(/\/+$/, '') + '/add-checkpoint');
      if (target.protocol !== 'http:') throw new Error('only http:// witness URLs are supported');
    } catch (e) {
      resolve({ kind: 'absent', reason: `bad witness URL ${JSON.stringify(url)}: ${(e as Error).message}` });
      return;
    }
    const data = Buffer.from(body, 'utf8');
    const req = request(target, { method: 'POST', agent, headers: { 'content-type': 'text/plain; charset=utf-8', 'content-length': data.length } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER) {
          req.destroy();
          done({ kind: 'absent', reason: 'the answer is larger than 64 KiB' });
        } else chunks.push(c);
      });
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status === 200) return done({ kind: 'cosigned', lines: text });
        if (status === 409) {
          const n = /^([0-9]+)\n$/.exec(text);
          const s = n ? parseDecimal(n[1]) : null;
          return done(s === null ? { kind: 'refused', status, reason: 'a 409 without a size' } : { kind: 'conflict', size: s });
        }
        done({ kind: 'refused', status, reason: text.split('\n', 1)[0].replace(/[^\x20-\x7e]/g, '?').slice(0, 200) });
      });
      res.on('error', (e) => done({ kind: 'absent', reason: e.message }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ kind: 'absent', reason: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (e) => done({ kind: 'absent', reason: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.end(data);
  });
}
