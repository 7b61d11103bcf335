// A small independent check of a ledger's bytes (records.jsonl and HEAD), for the places where
// the real auditor (audit/, which reads a directory) cannot look: the in-memory disk of the fuzz,
// at every step. It checks what SPEC 4-5 make of the bytes: canonical lines byte for byte, the
// schema, consecutive seqs, links, signatures by the one trusted key, HEAD matching the chain.
// The fuzz also runs the real auditor at the end of every run on a copy of the same bytes.
import { isUtf8 } from 'node:buffer';
import { canonicalLine, headDigest, recordId } from '../../../src/canonical.js';
import { headProblems, recordProblems, type Head, type LedgerRecord } from '../../../src/record.js';
import { verifySig } from '../../../src/sign.js';

export interface CheckedLedger {
  head: Head;
  ids: string[];
  records: LedgerRecord[];
  /** Where each published line starts. */
  offsets: number[];
}

// A line that verified once verifies again (same bytes, same key): the fuzz re-checks the same
// prefix after every step, so this keeps it cheap.
const goodLines = new Map<string, { id: string; record: LedgerRecord }>();
let goodHead: { bytes: Buffer; head: Head } | null = null;

function parseCanonical(bytes: Buffer, what: string): unknown {
  if (!isUtf8(bytes)) throw new Error(`${what}: not UTF-8`);
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${what}: not JSON`);
  }
  if (!Buffer.from(canonicalLine(value)).equals(bytes)) throw new Error(`${what}: not canonical`);
  return value;
}

/** Throws with the first reason the bytes are not a clean ledger signed by `key`. */
export function checkLedgerBytes(records: Buffer, headBytes: Buffer, key: string): CheckedLedger {
  let head: Head;
  if (goodHead && goodHead.bytes.equals(headBytes)) head = goodHead.head;
  else {
    head = parseCanonical(headBytes, 'HEAD') as Head;
    const hp = headProblems(head);
    if (hp.length) throw new Error(`HEAD: ${hp[0]}`);
    if (head.sig.key !== key) throw new Error('HEAD: signed by another key');
    if (!verifySig('head', headDigest(head), head.sig)) throw new Error('HEAD: signature does not verify');
    goodHead = { bytes: Buffer.from(headBytes), head };
  }
  if (records.length < head.size) throw new Error(`records.jsonl has ${records.length} bytes, HEAD publishes ${head.size}`);
  const ids: string[] = [];
  const out: LedgerRecord[] = [];
  const offsets: number[] = [];
  let at = 0;
  let prevTs = '';
  while (at < head.size) {
    const nl = records.indexOf(0x0a, at);
    if (nl < 0 || nl >= head.size) throw new Error(`the line at byte ${at} does not end by HEAD's size`);
    const bytes = records.subarray(at, nl + 1);
    const seq = ids.length;
    if (bytes.length > 1024 * 1024) throw new Error(`seq ${seq}: over 1 MiB`);
    const text = bytes.toString('latin1');
    let good = goodLines.get(text);
    if (good === undefined) {
      const record = parseCanonical(bytes, `seq ${seq}`) as LedgerRecord;
      const rp = recordProblems(record);
      if (rp.length) throw new Error(`seq ${seq}: ${rp[0]}`);
      const id = recordId(record);
      if (record.sig.key !== key) throw new Error(`seq ${seq}: signed by another key`);
      if (!verifySig('record', id, record.sig)) throw new Error(`seq ${seq}: signature does not verify`);
      good = { id, record };
      goodLines.set(text, good);
    }
    const { id, record } = good;
    if (record.seq !== seq) throw new Error(`seq ${seq}: has seq ${record.seq}`);
    if (record.prev_tail_hash !== (seq === 0 ? null : ids[seq - 1])) throw new Error(`seq ${seq}: prev_tail_hash does not link`);
    if ((seq === 0) !== (record.kind === 'genesis')) throw new Error(`seq ${seq}: genesis only at seq 0`);
    if (record.ts < prevTs) throw new Error(`seq ${seq}: ts goes backwards`);
    prevTs = record.ts;
    ids.push(id);
    out.push(record);
    offsets.push(at);
    at = nl + 1;
  }
  if (head.seq !== ids.length - 1 || head.tail !== ids[ids.length - 1] || head.genesis !== ids[0]) {
    throw new Error(`HEAD (seq ${head.seq}) does not match the chain (${ids.length} records)`);
  }
  if (head.ts < prevTs) throw new Error('HEAD is older than its tail');
  if (goodLines.size > 200_000) goodLines.clear();
  return { head, ids, records: out, offsets };
}
