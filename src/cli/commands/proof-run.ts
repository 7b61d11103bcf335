// `ledger prove` and `ledger verify-proof` (see proof.ts).
import { resolve } from 'node:path';
import { join } from 'node:path';
import { fromBase64url } from '../../canonical.js';
import { EXIT, LedgerError, RUN_AUDIT } from '../../errors.js';
import { CHECKPOINT_FILE, logNoteVerifier } from '../../store/checkpoint.js';
import { ledgerOrigin, parseCheckpoint } from '../../tlog/checkpoint.js';
import { toBase64 } from '../../tlog/hash.js';
import { SIG_ED25519, formatVkey, openNote, parseNote } from '../../tlog/note.js';
import { readRegularFileUpTo } from '../../fs/ops.js';
import { readTrust } from '../../keys/trust-file.js';
import { Ledger } from '../../ledger.js';
import { parseDuration } from '../../requests/fields.js';
import { realFileOps } from '../../fs/ops.js';
import { ledgerPaths } from '../../store/paths.js';
import { proveRecord } from '../../store/prove.js';
import { parsePolicy } from '../../tlog/policy.js';
import { MAX_PROOF_BYTES, parseProof } from '../../tlog/proof.js';
import { verifyRecordProof, type ProofLayer } from '../../tlog/record-proof.js';
import { emit, ledgerDir, trustPath, type CliIO, type Global } from './common.js';

const LAYER_EXIT: Record<ProofLayer, number> = { schema: EXIT.schema, linkage: EXIT.linkage, signature: EXIT.signature, 'key-pin': EXIT.keyPin, freshness: EXIT.freshness };

export function runProve(io: CliIO, ref: string, f: Global): number {
  const dir = ledgerDir(io, f);
  const ledger = Ledger.open({ dir, env: io.env });
  const at = ledger.resolve(ref, 'prove');
  const head = ledger.head();
  const paths = ledgerPaths(dir);
  // The record's exact line: the bytes the chain check bound, read back at its offset.
  const bytes = readLineAt(paths.records, at.offset);
  const proof = proveRecord(realFileOps, paths, head, at, bytes);
  if (f.json) emit(io, f, { ok: true, seq: at.seq, id: at.id, proof }, '');
  else io.stdout(proof);
  return 0;
}

function readLineAt(path: string, offset: number): Buffer {
  const fd = realFileOps.open(path, 'r');
  try {
    const out: Buffer[] = [];
    const buf = Buffer.alloc(65536);
    for (let pos = offset; ; ) {
      const n = realFileOps.read(fd, buf, pos);
      if (n <= 0) throw new LedgerError('OP_CORRUPT', `records.jsonl ends inside the line at byte ${offset}`);
      const nl = buf.subarray(0, n).indexOf(0x0a);
      if (nl >= 0) {
        out.push(Buffer.from(buf.subarray(0, nl)));
        return Buffer.concat(out);
      }
      out.push(Buffer.from(buf.subarray(0, n)));
      pos += n;
    }
  } finally {
    realFileOps.close(fd);
  }
}

export function runVerifyProof(io: CliIO, file: string, f: Global & { trust?: string; policy?: string; maxAge?: string }): number {
  if (file === '') throw new LedgerError('USAGE', 'verify-proof takes the proof file (`-` for stdin is not supported)');
  if (f.policy === undefined) throw new LedgerError('USAGE', '--policy is required: the tlog-policy naming the witnesses and their quorum (`quorum none` for none)');
  const maxAgeMs = f.maxAge === undefined ? null : parseDuration(f.maxAge, 'max-age');
  // No ledger is read: the trust file is --trust or $LEDGER_TRUST, never looked for in a project.
  const tp = f.trust ?? io.env.LEDGER_TRUST;
  if (!tp) throw new LedgerError('USAGE', '--trust is required (or $LEDGER_TRUST): the keys that may sign the ledger');
  const trust = readTrust(resolve(io.cwd, tp));
  const policy = parsePolicy(readInput(resolve(io.cwd, f.policy), 1 << 20, 'INPUT_POLICY').toString('utf8'), f.policy);
  const proof = parseProof(readInput(resolve(io.cwd, file), MAX_PROOF_BYTES, 'INPUT_PROOF'));
  const v = verifyRecordProof(proof, trust, policy, Date.now(), maxAgeMs);
  const code = v.failed === null ? EXIT.ok : LAYER_EXIT[v.failed];
  emit(io, f, { ...v, exit_code: code }, [v.ok ? `ok: ${v.reason}${v.witnesses.length ? `; cosigned by ${v.witnesses.join(', ')}` : ''}` : `${v.failed}: ${v.reason}`]);
  return code;
}

function readInput(path: string, max: number, code: 'INPUT_PROOF' | 'INPUT_POLICY'): Buffer {
  let b: Buffer | null;
  try {
    b = readRegularFileUpTo(path, max);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new LedgerError('INPUT_NOT_FOUND', `no file at ${path}`, { path });
    throw e;
  }
  if (b === null) throw new LedgerError(code, `${path} is larger than ${max} bytes`, { path });
  return b;
}

export function runCheckpointShow(io: CliIO, f: Global & { vkey: boolean; checkpoint: boolean }): number {
  if (f.vkey && f.checkpoint) throw new LedgerError('USAGE', '--checkpoint and --vkey print different things: give one');
  const dir = ledgerDir(io, f);
  const head = Ledger.open({ dir, env: io.env }).head();
  const origin = ledgerOrigin(head.genesis);
  const vkey = formatVkey({ name: origin, type: SIG_ED25519, publicKey: fromBase64url(head.sig.key, 32)! });
  if (f.vkey) {
    emit(io, f, { ok: true, origin, vkey }, [vkey]);
    return 0;
  }
  const paths = ledgerPaths(dir);
  let text: string;
  try {
    text = realFileOps.readFile(join(paths.dir, CHECKPOINT_FILE)).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new LedgerError('INPUT_NOT_FOUND', `no checkpoint beside HEAD in ${dir}`, { dir }, 'the next append signs one');
    throw e;
  }
  // Shown only once it verifies under HEAD's key: nothing unverified is printed as the ledger's.
  const note = parseNote(text);
  const v = logNoteVerifier(origin, head.sig.key);
  if (!v || openNote(note, [v]).verified.length === 0) throw new LedgerError('OP_CORRUPT', 'the checkpoint beside HEAD is not signed by HEAD\'s key', {}, RUN_AUDIT);
  const cp = parseCheckpoint(note.text);
  if (f.json) emit(io, f, { ok: true, origin, size: cp.size, root: toBase64(cp.root), vkey, checkpoint: text }, '');
  else io.stdout(text);
  return 0;
}
