// The manifest of a dir/ digest: the very stream dir.ts hashed (dir/v2 or dir/v3), kept in the
// blob store under its own digest, which is the evidence's digest. A hold can then name the
// first path that differs instead of "has changed".
//
// Policy: a manifest is a help, never an authority. It is read only through its digest (a
// stream that does not hash to the recorded digest is not used), and a missing or unreadable
// one leaves the reason as it was: the currency decision never depends on it.
import { digestOf } from '../../canonical.js';
import { V2_HEADER, V3_HEADER } from './dir.js';
import { shown } from './read-ops.js';

/** Reads a kept manifest by digest: its bytes, or null when there is none. */
export type KeptManifests = (digest: string) => Buffer | null;

interface Parsed { rules: Map<string, string>; entries: Map<string, string> }

const END_OF_RULES = 0xffffffff;

/** Entries of a v2/v3 stream as path (latin1 key) → tag and payload (hex); null when it does not parse. */
function parse(stream: Buffer): Parsed | null {
  let at = 0;
  const rules = new Map<string, string>();
  const entries = new Map<string, string>();
  let into = entries;
  if (stream.subarray(0, V2_HEADER.length).toString('latin1') === V2_HEADER) at = V2_HEADER.length;
  else if (stream.subarray(0, V3_HEADER.length).toString('latin1') === V3_HEADER) {
    at = V3_HEADER.length;
    into = rules;
  } else return null;
  while (at < stream.length) {
    if (at + 4 > stream.length) return null;
    const len = stream.readUInt32BE(at);
    at += 4;
    if (len === END_OF_RULES && into === rules) {
      into = entries;
      continue;
    }
    if (at + len + 1 > stream.length) return null;
    const path = stream.subarray(at, at + len).toString('latin1');
    at += len;
    const tag = String.fromCharCode(stream[at++]);
    let payload: Buffer;
    if (tag === 'd') payload = Buffer.alloc(0);
    else if (tag === 'f' || tag === 'x') payload = stream.subarray(at, (at += 32));
    else if (tag === 'l') {
      if (at + 4 > stream.length) return null;
      const n = stream.readUInt32BE(at);
      payload = stream.subarray(at + 4, (at += 4 + n));
    } else return null;
    into.set(path, tag + payload.toString('hex'));
  }
  return into === entries ? { rules, entries } : null;
}

const nameOf = (key: string) => JSON.stringify(shown(Buffer.from(key, 'latin1')));
const what = (v: string) => (v[0] === 'd' ? 'directory' : v[0] === 'l' ? 'link' : 'file');

/** The first difference, in path order, between two entry maps, in words; null when equal. */
function firstOf(was: Map<string, string>, now: Map<string, string>, rule: boolean): string | null {
  const keys = [...new Set([...was.keys(), ...now.keys()])].sort((a, b) => Buffer.compare(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1')));
  const prefix = rule ? 'the ignore rules ' : '';
  for (const k of keys) {
    const a = was.get(k);
    const b = now.get(k);
    if (a === b) continue;
    if (a === undefined) return `${prefix}${nameOf(k)} was added${rule ? '' : ` (a ${what(b!)})`}`;
    if (b === undefined) return `${prefix}${nameOf(k)} was removed`;
    if (a[0] !== b[0] && !(/[fx]/.test(a[0]) && /[fx]/.test(b[0]))) return `${prefix}${nameOf(k)} is now a ${what(b)}, was a ${what(a)}`;
    if (a.slice(1) === b.slice(1)) return `${prefix}${nameOf(k)} changed its execute bit`;
    return `${prefix}${nameOf(k)} changed`;
  }
  return null;
}

/**
 * The first path that differs between the kept manifest of `recorded` and the stream digested
 * now, in words ("\"src/a.py\" changed"), or null when it cannot be told.
 */
export function firstDifference(kept: KeptManifests, recorded: string, now: Buffer): string | null {
  let stream: Buffer | null;
  try {
    stream = kept(recorded);
  } catch {
    return null;
  }
  if (!stream || digestOf(stream) !== recorded) return null;
  const was = parse(stream);
  const is = parse(now);
  if (!was || !is) return null;
  return firstOf(was.rules, is.rules, true) ?? firstOf(was.entries, is.entries, false);
}

/** Largest manifest read back (a tree of about a million entries); a larger one is not used. */
const MAX_MANIFEST_BYTES = 128 << 20;

/**
 * The manifests the handoff log keeps in its blob store (`<ledger dir>/blobs/sha256/<hex>`, the
 * layout handoff/blobs.ts owns; the causal rules may not import the handoff log). Opened
 * O_NOFOLLOW, size-capped; the caller checks the digest.
 */
export function keptManifests(ledgerDir: string): KeptManifests {
  return (digest) => {
    if (!/^sha256:[0-9a-f]{64}$/.test(digest)) return null;
    const fs = process.getBuiltinModule('node:fs');
    const path = `${ledgerDir}/blobs/sha256/${digest.slice(7)}`;
    let fd: number;
    try {
      fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch {
      return null;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile() || st.size > MAX_MANIFEST_BYTES) return null;
      const buf = Buffer.alloc(st.size);
      let at = 0;
      while (at < buf.length) {
        const n = fs.readSync(fd, buf, at, buf.length - at, null);
        if (n === 0) return null;
        at += n;
      }
      return buf;
    } finally {
      fs.closeSync(fd);
    }
  };
}
