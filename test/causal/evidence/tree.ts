// Real trees on disk from plain specs, for the dir: evidence tests: names and link targets are
// raw bytes (newlines, non-UTF-8), built with Buffer paths so the disk gets them byte for byte.
import { chmodSync, mkdirSync, readdirSync, readFileSync, readlinkSync, lstatSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { digestOf, sha256Hex } from '../../../src/canonical.js';

export type Node = { t: 'f'; data: Buffer; exec: boolean } | { t: 'l'; target: Buffer } | { t: 'd'; kids: [Buffer, Node][] };

const SLASH = Buffer.from('/');

/** Writes the children of `tree` under `at` (which must exist). */
export function build(at: Buffer | string, tree: Extract<Node, { t: 'd' }>): void {
  const base = Buffer.isBuffer(at) ? at : Buffer.from(at);
  for (const [name, node] of tree.kids) {
    const p = Buffer.concat([base, SLASH, name]);
    if (node.t === 'f') {
      writeFileSync(p, node.data);
      chmodSync(p, node.exec ? 0o755 : 0o644);
    } else if (node.t === 'l') symlinkSync(node.target, p);
    else {
      mkdirSync(p);
      build(p, node);
    }
  }
}

/** What dir/v2 claims to capture of a tree, as one comparable string: paths, kinds, contents. */
export function canon(tree: Extract<Node, { t: 'd' }>, prefix = ''): string[] {
  const out: string[] = [];
  for (const [name, node] of tree.kids) {
    const path = prefix + name.toString('hex');
    if (node.t === 'f') out.push(`${path} ${node.exec ? 'x' : 'f'} ${node.data.toString('hex')}`);
    else if (node.t === 'l') out.push(`${path} l ${node.target.toString('hex')}`);
    else out.push(`${path} d`, ...canon(node, path + '2f'));
  }
  return prefix ? out : out.sort();
}

/**
 * The dir/v1 digest exactly as the code before dir/v2 computed it (copied from that version of
 * src/causal/evidence.ts, over string paths), the oracle for "old records still verify".
 */
export function legacyDirV1(dir: string, skip: readonly string[] = []): string {
  const entries: string[] = [];
  const skipSet = new Set(skip);
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs)) {
      const childAbs = `${abs}/${name}`;
      const childRel = rel ? `${rel}/${name}` : name;
      if (name === '.git' || skipSet.has(childAbs)) continue;
      const st = lstatSync(childAbs);
      if (st.isSymbolicLink()) entries.push(`l ${sha256Hex(readlinkSync(childAbs))} ${childRel}\n`);
      else if (st.isFile()) entries.push(`f ${createHash('sha256').update(readFileSync(childAbs)).digest('hex')} ${childRel}\n`);
      else if (st.isDirectory()) walk(childAbs, childRel);
      else throw new Error('neither a file, a directory nor a symlink');
    }
  };
  walk(dir, '');
  const byPath = (line: string) => Buffer.from(line.slice(line.indexOf(' ', 2) + 1));
  entries.sort((a, b) => Buffer.compare(byPath(a), byPath(b)));
  return digestOf('handoff-ledger/dir/v1\n' + entries.join(''));
}
