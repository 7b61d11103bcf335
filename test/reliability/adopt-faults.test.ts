// The adoption of a joined ledger (src/store/adopt.ts: the local copy takes records the remote
// published, lines at HEAD's size, then the remote's exact HEAD) is crash-safe at each step, by
// the fault model of the append (helpers/sim-disk.ts): it is the append's own quarantine step
// and lines-then-HEAD write. Every step of a fault-free adoption is stopped in turn: a process
// crash (with and without a write torn there), a power cut that keeps nothing or some of what
// was not yet durable, and each errno once. After each:
//
//   - HEAD is the local HEAD before or the remote's, byte for byte (none or the remote's, for a
//     ledger that had none), and the published bytes check clean: never a HEAD whose lines
//     are not there;
//   - a failure that is not a crash is a coded error, and one after which HEAD is the remote's
//     says it may have reached HEAD; otherwise the new lines were cut back off;
//   - bytes that stood past the local HEAD before (a killed writer's) are still there or in
//     quarantine/;
//   - the next refresh, fault-free (the adoption again from whatever HEAD is there, as
//     remote/link.ts does), ends byte-identical to the remote, every such byte in quarantine/,
//     and the next append builds on it. (A crashed process's HEAD temp file stays until a
//     writer on a real disk removes it: the simulated one cannot be listed that way.)
import { describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/errors.js';
import type { Draft } from '../../src/record.js';
import { adoptPublished } from '../../src/store/adopt.js';
import { appendDrafts, initLedger } from '../../src/store/append.js';
import { parseHead } from '../../src/store/head.js';
import { ledgerPaths, type LedgerPaths } from '../../src/store/paths.js';
import { quarantineUnpublished } from '../../src/store/recover.js';
import type { FileOps } from '../../src/fs/ops.js';
import { FIXED_PUBLIC_KEY, fixedSigner } from '../helpers/fixed-keys.js';
import { checkLedgerBytes } from './helpers/check-bytes.js';
import { FaultyOps, SimDisk, type ErrCode, type Fault } from './helpers/sim-disk.js';

const SIGNER = fixedSigner();
// Each run's machine is its own folder: the next append raises a writer mark (per-user state,
// keyed by the ledger's path) that must not meet another run's.
let machines = 0;
const START = Date.parse('2026-11-29T12:00:00.000Z');
/** A killed writer's bytes past the local HEAD: an unpublished, torn line. */
const JUNK = Buffer.from('{"v":1,"seq":3,"torn');

const draft = (n: number): Draft =>
  ({ kind: 'handoff', agent: 'remote', logical_operation_id: `op-${n}`, execution_id: `exec-${n}`, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }) as Draft;

/** The remote's ledger at two points: `before` (seq 2, what the local copy has) and `after` (seq 5). */
function remoteLedger() {
  const disk = new SimDisk('/r');
  let clock = START;
  const opts = { dir: '/r/.ledger', ops: disk.ops, now: () => new Date((clock += 7)) };
  initLedger(opts, SIGNER, 'harness');
  appendDrafts(opts, SIGNER, [draft(1), draft(2)]);
  const before = { records: disk.ops.readFile('/r/.ledger/records.jsonl'), head: disk.ops.readFile('/r/.ledger/HEAD') };
  appendDrafts(opts, SIGNER, [draft(3)]);
  appendDrafts(opts, SIGNER, [draft(4), draft(5)]);
  const after = { records: disk.ops.readFile('/r/.ledger/records.jsonl'), head: disk.ops.readFile('/r/.ledger/HEAD') };
  return { before, after };
}
const REMOTE = remoteLedger();

type Local = 'behind' | 'behind+junk' | 'none';

/** A durable file on the simulated disk (bytes and its directory entry). */
function put(ops: FileOps, dir: string, name: string, bytes: Buffer): void {
  const fd = ops.open(`${dir}/${name}`, 'w');
  ops.write(fd, bytes, 0);
  ops.fsync(fd);
  ops.close(fd);
  const d = ops.open(dir, 'r');
  ops.fsync(d);
  ops.close(d);
}

interface Machine { disk: SimDisk; paths: LedgerPaths }

/** A machine whose local copy is `local`: the remote's earlier state, with a killed writer's bytes past it, or no ledger yet (a join). */
function machine(local: Local): Machine {
  const root = `/w${machines++}`;
  const disk = new SimDisk(root);
  const paths = ledgerPaths(`${root}/.ledger`);
  disk.ops.mkdir(paths.dir);
  const w = disk.ops.open(root, 'r');
  disk.ops.fsync(w);
  disk.ops.close(w);
  if (local !== 'none') {
    put(disk.ops, paths.dir, 'records.jsonl', local === 'behind+junk' ? Buffer.concat([REMOTE.before.records, JUNK]) : REMOTE.before.records);
    put(disk.ops, paths.dir, 'HEAD', REMOTE.before.head);
  }
  return { disk, paths };
}

/**
 * What a refresh hands the adoption (the local HEAD and its bytes, the new lines, the remote
 * HEAD), read fault-free from `disk`, and the adoption through `ops` (the faults fall on it alone).
 */
function adoption({ disk, paths }: Machine, ops: FileOps = disk.ops) {
  const bytes = disk.ops.exists(paths.head) ? disk.ops.readFile(paths.head) : null;
  const local = bytes ? { head: parseHead(bytes, 'HEAD'), bytes } : null;
  const lines = REMOTE.after.records.subarray(local ? local.head.size : 0);
  return () => adoptPublished(ops, paths, local, lines, REMOTE.after.head);
}

/** How many file operations a fault-free adoption makes from `local`. */
function stepsOf(local: Local): number {
  const m = machine(local);
  const f = new FaultyOps(m.disk);
  adoption(m, f.ops)();
  return f.step;
}

function plans(steps: number): Fault[] {
  const out: Fault[] = [];
  for (let at = 0; at < steps; at++) {
    out.push({ t: 'crash', at, tear: null, power: false, keepSeed: 0 });
    out.push({ t: 'crash', at, tear: 5, power: false, keepSeed: 0 });
    for (const keepSeed of [0, 1, 2, 3]) out.push({ t: 'crash', at, tear: null, power: true, keepSeed });
    for (const code of ['EIO', 'ENOSPC', 'EACCES', 'EROFS'] as ErrCode[]) out.push({ t: 'error', at, code, sticky: false, tear: 3 });
  }
  return out;
}

/** Whether quarantine/ holds `bytes`, once seen at `at` (quarantine/at-<P>-<hash>.bin holds what stood from byte P). */
function quarantined({ disk, paths }: Machine, at: number, bytes: Buffer): boolean {
  return disk.list(paths.quarantine).some((n) => {
    const m = /^at-(\d+)-[0-9a-f]+\.bin$/.exec(n);
    const p = m ? Number(m[1]) : NaN;
    const f = disk.ops.readFile(`${paths.quarantine}/${n}`);
    return p <= at && f.subarray(at - p, at - p + bytes.length).equals(bytes);
  });
}

const stats = { runs: 0, crashes: 0, powerCuts: 0, errors: 0, leftOld: 0, leftNew: 0, leftNone: 0, reachedHeadErrors: 0 };

function runOne(local: Local, fault: Fault): void {
  stats.runs++;
  const m = machine(local);
  const { disk, paths } = m;
  const faulty = new FaultyOps(disk);
  faulty.arm(fault);
  let error: unknown = null;
  try {
    adoption(m, faulty.ops)();
  } catch (e) {
    error = e;
  }
  const crashed = faulty.crashed;
  const where = `${local}, ${JSON.stringify(fault)}`;
  // A crash fires at its step; an errno at the first later step its class can hit, if any.
  if (fault.t === 'crash') expect(faulty.fired, `${where}: the crash happened`).toBe(true);
  if (!faulty.fired) expect(error, `${where}: failed with no fault`).toBeNull();
  if (crashed) {
    stats.crashes++;
    if (fault.t === 'crash' && fault.power) stats.powerCuts++;
    disk.restart({ power: fault.t === 'crash' && fault.power, keepSeed: fault.t === 'crash' ? fault.keepSeed : 0 });
  } else if (error) {
    stats.errors++;
    expect(error, `${where}: ${String(error)}`).toBeInstanceOf(LedgerError);
    expect((error as LedgerError).exitCode, where).toBe(3);
    expect(disk.openFds(), `${where}: a descriptor was left open`).toBe(0);
  }

  // HEAD is the one before or the remote's, and the published bytes check clean.
  const ops = disk.ops;
  const head = ops.exists(paths.head) ? ops.readFile(paths.head) : null;
  const records = ops.exists(paths.records) ? ops.readFile(paths.records) : Buffer.alloc(0);
  const allowed = local === 'none' ? [null, REMOTE.after.head] : [REMOTE.before.head, REMOTE.after.head];
  expect(allowed.some((h) => (h === null ? head === null : head !== null && head.equals(h))), `${where}: HEAD is neither the one before nor the remote's`).toBe(true);
  if (head) {
    const checked = checkLedgerBytes(records, head, FIXED_PUBLIC_KEY);
    expect(records.subarray(0, checked.head.size).equals(REMOTE.after.records.subarray(0, checked.head.size)), `${where}: the published bytes are not the remote's`).toBe(true);
  }
  const isNew = head !== null && head.equals(REMOTE.after.head);
  if (isNew) stats.leftNew++;
  else if (head) stats.leftOld++;
  else stats.leftNone++;
  if (!crashed && !error) expect(isNew, `${where}: returned, but HEAD is not the remote's`).toBe(true);
  if (error && !crashed) {
    if (isNew) {
      stats.reachedHeadErrors++;
      expect((error as LedgerError).message, where).toMatch(/reached HEAD/);
    } else {
      // Cut back: past the published end, only what stood there before (or nothing, once moved).
      const size = head ? parseHead(head, 'HEAD').size : 0;
      const past = records.subarray(size);
      expect(past.length === 0 || past.equals(JUNK), `${where}: the new lines were not cut back off (${past.length} bytes)`).toBe(true);
    }
  }
  // A killed writer's bytes stay where they were or are in quarantine/.
  const at = REMOTE.before.records.length;
  if (local === 'behind+junk') {
    const inPlace = !isNew && records.subarray(at, at + JUNK.length).equals(JUNK);
    expect(inPlace || quarantined(m, at, JUNK), `${where}: the bytes past HEAD were lost`).toBe(true);
  }

  // The next refresh, fault-free: from HEAD as it is now, the adoption again (nothing when the
  // copy is at the remote's HEAD already, only the quarantine step), then the next append.
  if (isNew) quarantineUnpublished(ops, paths, parseHead(head!, 'HEAD'));
  else adoption(m)();
  expect(ops.readFile(paths.head).equals(REMOTE.after.head), `${where}: the next refresh did not end at the remote's HEAD`).toBe(true);
  expect(ops.readFile(paths.records).equals(REMOTE.after.records), `${where}: the next refresh did not end with the remote's records`).toBe(true);
  if (local === 'behind+junk') expect(quarantined(m, at, JUNK), `${where}: the bytes past HEAD are not in quarantine/`).toBe(true);
  const next = appendDrafts({ dir: paths.dir, ops, now: () => new Date(START + 3_600_000) }, SIGNER, [draft(6)]);
  expect(next.records[0].seq, where).toBe(6);
}

describe('when the local copy of a joined ledger takes the remote\'s records and a fault stops any step', () => {
  for (const local of ['behind', 'behind+junk', 'none'] as Local[]) {
    it(`(${local === 'none' ? 'a join: no local ledger yet' : local === 'behind' ? 'a copy behind the remote' : 'a copy behind, with a killed writer\'s bytes past its HEAD'}) HEAD is the old one or the remote's with its lines, and the next refresh ends byte-identical`, () => {
      const steps = stepsOf(local);
      expect(steps).toBeGreaterThan(8);
      for (const fault of plans(steps)) runOne(local, fault);
    });
  }

  it('covers every step', () => {
    // Figures for the report; that the faults really fired at every step is asserted per run.
    expect(stats.runs).toBeGreaterThan(0);
    expect(stats.leftOld + stats.leftNone).toBeGreaterThan(0);
    expect(stats.leftNew).toBeGreaterThan(0);
    console.log(`[reliability] adoption faults: ${JSON.stringify(stats)}`);
  });
});
