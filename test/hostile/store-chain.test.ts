// Issue 13 finding 9 (and 17's non-UTF-8 line): a record edited in place, with no key (its text
// changed and re-canonicalised, or one byte made invalid UTF-8), is found by every read verb
// (show, log, resume, render, render --check, pending) and refused by every writer: exit 3,
// OP_CORRUPT, and the ledger and the views byte-identical.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalLine } from '../../src/canonical.js';
import { initProject, runLedger, snapshot, type Run } from '../helpers/cli.js';

let p: Awaited<ReturnType<typeof initProject>>;
const ledger = (args: string[]) => runLedger(args, { cwd: p.dir });
const ok = (r: Run) => expect(r.code, r.stderr).toBe(0);
const records = () => join(p.ledger, 'records.jsonl');
const views = () => ['HANDOFF.md', 'HANDOFF.yml'].map((f) => (existsSync(join(p.dir, f)) ? readFileSync(join(p.dir, f), 'utf8') : null));

beforeEach(async () => {
  p = await initProject('chain');
  ok(await ledger(['start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()']));
  ok(await ledger(['checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'fixed toLocal() for +01:00', '--state', 'tz tests pass', '--next', 'handle DST']));
  ok(await ledger(['append', 'handoff', '--agent', 'claude', '--op', 'deploy', '--exec', 'e1', '--outcome', 'success']));
  ok(await ledger(['log'])); // the verified-chain memo now vouches for the file as it is
});
afterEach(() => p.cleanup());

/** Rewrites line `seq` of records.jsonl in place with `edit` applied to its bytes. */
function editInPlace(seq: number, edit: (line: Buffer) => Buffer) {
  const all = readFileSync(records());
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = all.indexOf(0x0a); i >= 0; i = all.indexOf(0x0a, start)) {
    parts.push(all.subarray(start, i + 1));
    start = i + 1;
  }
  parts[seq] = edit(parts[seq]);
  writeFileSync(records(), Buffer.concat(parts));
}

const EDITS: [string, () => void, RegExp][] = [
  [
    're-canonicalised with other text of the same length (no key: the signature is left as it was)',
    () => editInPlace(2, (line) => Buffer.from(canonicalLine({ ...JSON.parse(line.toString('utf8')), done: 'fixed toLocal() for -05:00' }))),
    /records\.jsonl: the line at byte \d+ \(seq 3\) does not link to the record before it/,
  ],
  [
    're-canonicalised with longer text (the lines after it move)',
    () => editInPlace(2, (line) => Buffer.from(canonicalLine({ ...JSON.parse(line.toString('utf8')), done: 'fixed toLocal() for every offset' }))),
    /does not link to the record before it|does not end with a newline at byte|does not end a line at byte/,
  ],
  [
    'changed by one character, the same size (a same-length edit the memo must see)',
    () => editInPlace(2, (line) => Buffer.from(line.toString('utf8').replace('+01:00', '+02:00'))),
    /\(seq 3\) does not link to the record before it/,
  ],
  [
    'given a byte that is not UTF-8, the same size',
    () => editInPlace(2, (line) => {
      const b = Buffer.from(line);
      b[b.indexOf('+01:00') + 1] = 0xff;
      return b;
    }),
    /the line at byte \d+ \(seq 2\) is not UTF-8/,
  ],
];

for (const [what, edit, reason] of EDITS) {
  describe(`when a record in the middle is ${what}`, () => {
    beforeEach(() => edit());

    it('show, log, resume, render, render --check and pending refuse (exit 3), never print it, and change nothing', async () => {
      const before = { ...snapshot(p.ledger), views: views() };
      for (const args of [['show', '2'], ['show', '0'], ['log'], ['log', '--json'], ['resume', 'fix-tz'], ['render'], ['render', '--check'], ['pending']]) {
        const r = await ledger(args);
        expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(3);
        expect(r.stderr + r.stdout, args.join(' ')).toMatch(reason);
        expect(r.stdout, args.join(' ')).not.toMatch(/every offset|\+02:00|-05:00/);
        expect({ ...snapshot(p.ledger), views: views() }, args.join(' ')).toEqual(before);
      }
    });

    it('writers refuse to build on it (exit 3, OP_CORRUPT): append, checkpoint, finish, revoke, start', async () => {
      const before = { ...snapshot(p.ledger), views: views() };
      for (const args of [
        ['append', 'handoff', '--agent', 'claude', '--op', 'deploy', '--exec', 'e2', '--outcome', 'success', '--json'],
        ['checkpoint', 'fix-tz', '--agent', 'claude', '--done', 'd', '--state', 's', '--next', 'n', '--json'],
        ['finish', 'fix-tz', '--agent', 'claude', '--done', 'd', '--state', 's', '--next', 'n', '--json'],
        ['start', 'other', '--agent', 'codex', '--summary', 's', '--json'],
      ]) {
        const r = await ledger(args);
        expect(r.code, `${args.join(' ')}: ${r.stdout}`).toBe(3);
        expect(JSON.parse(r.stdout), args.join(' ')).toMatchObject({ ok: false, error: { code: 'OP_CORRUPT' } });
        expect({ ...snapshot(p.ledger), views: views() }, args.join(' ')).toEqual(before);
      }
    });
  });
}
