// The checkpoint beside HEAD (SPEC 13): every append signs the checkpoint of the tree through its
// records from the kept right edge (.ledger/tree); the auditor checks its root against the
// records on its own (audit/checkpoint.ts) and fails linkage (exit 11) when it is not theirs.
import { readFileSync, readdirSync, rmSync, writeFileSync, symlinkSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseSecretKeyFile } from '../../src/keys/trust.js';
import { formatCheckpoint, parseCheckpoint } from '../../src/tlog/checkpoint.js';
import { leafHash, toBase64 } from '../../src/tlog/hash.js';
import { toBase64url } from '../../src/canonical.js';
import { openNote, parseNote, signNote } from '../../src/tlog/note.js';
import { RightEdge } from '../../src/tlog/tree.js';
import { createSigner } from '../../src/sign.js';
import { logNoteSigner, logNoteVerifier } from '../../src/store/checkpoint.js';
import { initProject, runLedger } from '../helpers/cli.js';
import { projectState } from '../helpers/project-state.js';

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

async function project(notes: number) {
  const p = await initProject('cp');
  cleanup = p.cleanup;
  const env = { LEDGER_AGENT: 'claude' };
  expect((await runLedger(['start', 'item', '--summary', 's'], { cwd: p.dir, env })).code).toBe(0);
  for (let i = 0; i < notes; i++) expect((await runLedger(['note', 'item', '--text', `n${i}`], { cwd: p.dir, env })).code).toBe(0);
  return { ...p, env };
}

/** The root of records.jsonl's lines, computed here from the file alone. */
function recordsRoot(ledger: string, size?: number): { size: number; root: string } {
  const e = recordsTree(ledger, size);
  return { size: e.size, root: toBase64(e.root()) };
}

/** The tree over records.jsonl's lines (the first `size`, or all), built here from the file alone. */
function recordsTree(ledger: string, size?: number): RightEdge {
  const lines = readFileSync(join(ledger, 'records.jsonl'), 'utf8').split('\n').filter(Boolean).slice(0, size);
  const e = new RightEdge();
  for (const l of lines) e.append(leafHash(l));
  return e;
}

function checkpointOf(ledger: string) {
  const head = JSON.parse(readFileSync(join(ledger, 'HEAD'), 'utf8'));
  const note = parseNote(readFileSync(join(ledger, 'checkpoint')));
  const cp = parseCheckpoint(note.text);
  const origin = 'handoff-ledger/' + head.genesis.slice(7);
  const verified = openNote(note, [logNoteVerifier(origin, head.sig.key)!]).verified.length;
  return { head, cp, origin, verified };
}

describe('when records are appended', () => {
  it('each HEAD has beside it a checkpoint of all its records, signed by its key, with the records\' root', async () => {
    const p = await project(6);
    const { head, cp, origin, verified } = checkpointOf(p.ledger);
    expect(cp.origin).toBe(origin);
    expect(cp.size).toBe(head.seq + 1);
    expect(verified).toBe(1);
    expect({ size: cp.size, root: toBase64(cp.root) }).toEqual(recordsRoot(p.ledger));
    const audit = await runLedger(['audit'], { cwd: p.dir });
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    expect(audit.stdout + audit.stderr).not.toContain('checkpoint');
  });

  it('rebuilds a tree file someone changed, truncated or removed, and signs the right root', async () => {
    const p = await project(2);
    const tree = join(p.ledger, 'tree');
    const damage = [
      () => writeFileSync(tree, Buffer.alloc(readFileSync(tree).length, 7)),
      () => writeFileSync(tree, readFileSync(tree).subarray(0, 40)),
      () => rmSync(tree),
    ];
    for (const [i, d] of damage.entries()) {
      d();
      expect((await runLedger(['note', 'item', '--text', `after damage ${i}`], { cwd: p.dir, env: p.env })).code).toBe(0);
      const { cp, verified } = checkpointOf(p.ledger);
      expect(verified, `damage ${i}`).toBe(1);
      expect({ size: cp.size, root: toBase64(cp.root) }, `damage ${i}`).toEqual(recordsRoot(p.ledger));
    }
  });

  it('audits a damaged or unsigned checkpoint as a linkage failure that says how it is mended, and the next append mends it', async () => {
    const p = await project(1);
    const file = join(p.ledger, 'checkpoint');
    const { origin } = parseCheckpoint(parseNote(readFileSync(file)).text);
    const other = signNote(formatCheckpoint({ origin, size: 1, root: new Uint8Array(32) }), [logNoteSigner(origin, createSigner(new Uint8Array(32).fill(9)))]);
    for (const [i, bad] of ['junk\n', other].entries()) {
      writeFileSync(file, bad);
      const audit = await runLedger(['audit'], { cwd: p.dir });
      expect(audit.code, `case ${i}`).toBe(11);
      expect(audit.stdout, `case ${i}`).toMatch(/linkage fails at HEAD: the checkpoint (beside HEAD is malformed|is not signed by a pinned key) \(it is derived: the next append by a writer of this ledger replaces it\)/);
      expect((await runLedger(['note', 'item', '--text', `mends ${i}`], { cwd: p.dir, env: p.env })).code).toBe(0);
      expect((await runLedger(['audit'], { cwd: p.dir })).code, `case ${i}`).toBe(0);
    }
  });

  // Issue 23's rule for every file below .ledger: a planted link is never followed, replaced or
  // removed, and the write that would have gone there does not happen silently stale.
  it('fails closed on a link planted at the tree or the checkpoint (exit 3, OP_SYMLINK): nothing written', async () => {
    const p = await project(1);
    writeFileSync(join(p.dir, 'elsewhere'), 'keep');
    for (const name of ['checkpoint', 'tree']) {
      const file = join(p.ledger, name);
      const kept = readFileSync(file);
      rmSync(file);
      symlinkSync(join(p.dir, 'elsewhere'), file);
      const before = projectState(p.dir);
      const r = await runLedger(['note', 'item', '--text', `with a link at ${name}`], { cwd: p.dir, env: p.env });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr.trim().split('\n')[0]).toMatch(new RegExp(`OP_SYMLINK.*${name}|${name}.*symbolic link`));
      expect(projectState(p.dir)).toEqual(before);
      expect(readFileSync(join(p.dir, 'elsewhere'), 'utf8')).toBe('keep');
      rmSync(file);
      writeFileSync(file, kept);
    }
    expect((await runLedger(['note', 'item', '--text', 'once the links are gone'], { cwd: p.dir, env: p.env })).code).toBe(0);
    expect(checkpointOf(p.ledger).verified).toBe(1);
  });
});

describe('when the checkpoint beside HEAD is not the records\'', () => {
  async function withCheckpoint(make: (origin: string, size: number, sign: (text: string) => string) => string) {
    const p = await project(3);
    const { origin, head } = checkpointOf(p.ledger);
    lastLedger = p.ledger;
    const seed = parseSecretKeyFile(readFileSync(join(p.dir, 'keys/harness.key'), 'utf8')).seed;
    const sign = (text: string) => signNote(text, [logNoteSigner(origin, createSigner(seed))]);
    writeFileSync(join(p.ledger, 'checkpoint'), make(origin, head.seq + 1, sign));
    return runLedger(['audit'], { cwd: p.dir });
  }

  it('fails linkage (exit 11) for another root signed by HEAD\'s key', async () => {
    const r = await withCheckpoint((origin, size, sign) => sign(formatCheckpoint({ origin, size, root: leafHash('not the records') })));
    expect(r.code, r.stdout).toBe(11);
    expect(r.stdout).toContain('LINKAGE_CHECKPOINT');
  });
  it('fails linkage for a checkpoint unsigned by a pinned key and a malformed one, and warns of one past HEAD', async () => {
    // Past HEAD: what a reader racing an append sees; not checked, with a warning.
    const past = await withCheckpoint((origin, size, sign) => sign(formatCheckpoint({ origin, size: size + 1, root: leafHash('x') })));
    expect(past.code).toBe(0);
    expect(past.stdout + past.stderr).toContain('past the audited HEAD');
    const other = await withCheckpoint((origin, size) => signNote(formatCheckpoint({ origin, size, root: leafHash('x') }), [logNoteSigner(origin, createSigner(new Uint8Array(32).fill(3)))]));
    expect(other.code).toBe(11);
    const junk = await withCheckpoint(() => 'not a checkpoint\n');
    expect(junk.code).toBe(11);
  });
  it('passes a checkpoint of fewer records (a joined copy) when its root is theirs, with a warning', async () => {
    const r = await withCheckpoint((origin, _size, sign) => {
      const p = recordsRootFromCwd();
      return sign(formatCheckpoint({ origin, size: 2, root: Buffer.from(p, 'base64') }));
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain('covers 2 of');
  });
});

// The ledger of the test in progress (withCheckpoint's project) is the only one under cleanup.
let lastLedger = '';
function recordsRootFromCwd(): string {
  return recordsRoot(lastLedger, 2).root;
}

// SPEC 7 and 8: the floor carries what an audit from it needs. With the tree's right edge in it,
// an audit from a floor hashes only the records after it, and still finds a checkpoint whose root
// is not the records'.
describe('when the audit starts from a floor', () => {
  async function floored(notesAfter: number) {
    const p = await project(3);
    const floorPath = join(p.dir, '..', `${p.dir.split('/').pop()}.floor.json`);
    const first = await runLedger(['audit', '--floor', floorPath, '--advance'], { cwd: p.dir });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    for (let i = 0; i < notesAfter; i++) expect((await runLedger(['note', 'item', '--text', `later ${i}`], { cwd: p.dir, env: p.env })).code).toBe(0);
    const old = cleanup;
    cleanup = () => {
      rmSync(floorPath, { force: true });
      old?.();
    };
    return { ...p, floorPath, floorAt: JSON.parse(readFileSync(floorPath, 'utf8')) as { seq: number; tree: string[] } };
  }

  it('keeps the tree\'s right edge at the floor, the one the records give', async () => {
    const p = await floored(0);
    expect(p.floorAt.tree).toEqual(recordsTree(p.ledger, p.floorAt.seq + 1).hashes.map((h) => toBase64url(h)));
  });
  it('passes the records appended since, and advances the floor with the new edge', async () => {
    const p = await floored(2);
    const r = await runLedger(['audit', '--floor', p.floorPath, '--advance', '--json'], { cwd: p.dir });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).checked).toBe(2);
    const now = JSON.parse(readFileSync(p.floorPath, 'utf8'));
    expect(now.seq).toBe(p.floorAt.seq + 2);
    expect(now.tree).toEqual(recordsTree(p.ledger).hashes.map((h) => toBase64url(h)));
  });
  it('fails linkage (exit 11) for a checkpoint above the floor whose root is not the records\'', async () => {
    const p = await floored(2);
    const { origin, head } = checkpointOf(p.ledger);
    const seed = parseSecretKeyFile(readFileSync(join(p.dir, 'keys/harness.key'), 'utf8')).seed;
    writeFileSync(join(p.ledger, 'checkpoint'), signNote(formatCheckpoint({ origin, size: head.seq + 1, root: leafHash('forged') }), [logNoteSigner(origin, createSigner(seed))]));
    const before = readFileSync(p.floorPath);
    const r = await runLedger(['audit', '--floor', p.floorPath, '--advance'], { cwd: p.dir });
    expect(r.code, r.stdout).toBe(11);
    expect(r.stdout).toContain('LINKAGE_CHECKPOINT');
    expect(readFileSync(p.floorPath)).toEqual(before);
  });
  it('hashes from the floor\'s edge: another edge in the floor gives another root (the floor is trusted as its id is)', async () => {
    const p = await floored(1);
    const changed = { ...p.floorAt, tree: p.floorAt.tree.map((h, i) => (i === 0 ? toBase64url(leafHash('other')) : h)) };
    writeFileSync(p.floorPath, JSON.stringify(changed));
    const r = await runLedger(['audit', '--floor', p.floorPath], { cwd: p.dir });
    expect(r.code, r.stdout).toBe(11);
    expect(r.stdout).toContain('LINKAGE_CHECKPOINT');
  });
  it('ignores an edge that does not fit the floor\'s size, with a warning, and hashes from genesis', async () => {
    const p = await floored(1);
    writeFileSync(p.floorPath, JSON.stringify({ ...p.floorAt, tree: [...p.floorAt.tree, p.floorAt.tree[0]] }));
    const r = await runLedger(['audit', '--floor', p.floorPath], { cwd: p.dir });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain('tree edge does not fit');
  });
  it('refuses a floor whose edge is not base64url hashes (exit 2, one line): nothing written', async () => {
    const p = await floored(0);
    writeFileSync(p.floorPath, JSON.stringify({ ...p.floorAt, tree: ['not a hash'] }));
    const before = projectState(p.dir);
    const r = await runLedger(['audit', '--floor', p.floorPath, '--advance'], { cwd: p.dir });
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('$.tree[0]');
    expect(projectState(p.dir)).toEqual(before);
  });
});

// SPEC 8's floor has five fields and `gate` never rewrites the caller's floor: the edge this user
// hashed at that floor once is kept (store/user-floor.ts floorTreePath), so the next gates from it
// hash only what is new.
/**
 * A project whose floor file, in SPEC 8's five fields, names its HEAD, with one record appended
 * after it, and a state directory of its own; both removed with the project.
 */
async function fiveFieldFloor() {
  const p = await project(2);
  const lines = readFileSync(join(p.ledger, 'records.jsonl'), 'utf8').split('\n').filter(Boolean);
  const seq = lines.length - 1;
  const offset = Buffer.byteLength(lines.slice(0, seq).map((l) => l + '\n').join(''));
  const head = JSON.parse(readFileSync(join(p.ledger, 'HEAD'), 'utf8'));
  const floorPath = join(p.dir, '..', `${p.dir.split('/').pop()}.five.json`);
  const floorText = JSON.stringify({ v: 1, genesis: head.genesis, seq, id: head.tail, offset });
  writeFileSync(floorPath, floorText);
  const state = join(p.dir, '..', `${p.dir.split('/').pop()}.state`);
  const old = cleanup;
  cleanup = () => {
    rmSync(floorPath, { force: true });
    rmSync(state, { recursive: true, force: true });
    old?.();
  };
  const env = { ...p.env, LEDGER_STATE_DIR: state };
  expect((await runLedger(['note', 'item', '--text', 'after the floor'], { cwd: p.dir, env })).code).toBe(0);
  return { p, seq, head, floorPath, floorText, state, env };
}

describe('when a gate starts from a floor in SPEC 8\'s five fields', () => {
  it('the first gate keeps the edge at that floor, the next use it; a changed kept edge fails the chain (exit 11\'s finding), never passes', async () => {
    const { p, seq, head, floorPath, state, env } = await fiveFieldFloor();
    const gate = () => runLedger(['gate', 'item', '--floor', floorPath, '--json'], { cwd: p.dir, env });
    const first = JSON.parse((await gate()).stdout);
    expect(first.chain.ok, JSON.stringify(first.chain)).toBe(true);
    const keptFile = readdirSync(join(state, 'floor')).find((f) => f.endsWith('.tree.json'));
    expect(keptFile).toBeDefined();
    const kept = JSON.parse(readFileSync(join(state, 'floor', keptFile!), 'utf8'));
    expect(kept).toMatchObject({ genesis: head.genesis, seq, id: head.tail });
    expect(kept.tree).toEqual(recordsTree(p.ledger, seq + 1).hashes.map((h) => toBase64url(h)));
    const second = JSON.parse((await gate()).stdout);
    expect(second.chain.ok).toBe(true);
    // The kept edge is what the next gate hashes from: another one gives another root.
    writeFileSync(join(state, 'floor', keptFile!), JSON.stringify({ ...kept, tree: kept.tree.map((h: string, i: number) => (i === 0 ? toBase64url(leafHash('other')) : h)) }), { mode: 0o600 });
    const third = JSON.parse((await gate()).stdout);
    expect(third.chain.ok).toBe(false);
    expect(third.chain.reason).toContain('linkage');
  });
});

// The same for `ledger audit --floor FILE` without --advance, which never rewrites the caller's
// floor either: without the kept edge every audit from it hashed the whole tree.
describe('when an audit starts from a floor in SPEC 8\'s five fields', () => {
  it('the first audit keeps the edge at that floor, the next use it (a changed kept edge is exit 11); the floor file is never written', async () => {
    const { p, seq, head, floorPath, floorText, state, env } = await fiveFieldFloor();
    const audit = (extra: Record<string, string> = {}) => runLedger(['audit', '--floor', floorPath, '--json'], { cwd: p.dir, env: { ...env, ...extra } });
    const first = await audit();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).floor_tree).toBeUndefined(); // the report is as before
    const keptFile = readdirSync(join(state, 'floor')).find((f) => f.endsWith('.tree.json'));
    expect(keptFile).toBeDefined();
    const kept = JSON.parse(readFileSync(join(state, 'floor', keptFile!), 'utf8'));
    expect(kept).toMatchObject({ genesis: head.genesis, seq, id: head.tail });
    expect(kept.tree).toEqual(recordsTree(p.ledger, seq + 1).hashes.map((h) => toBase64url(h)));
    expect((await audit()).code).toBe(0);
    // The kept edge is what the next audit hashes from: another one gives another root.
    writeFileSync(join(state, 'floor', keptFile!), JSON.stringify({ ...kept, tree: kept.tree.map((h: string, i: number) => (i === 0 ? toBase64url(leafHash('other')) : h)) }), { mode: 0o600 });
    const third = await audit();
    expect(third.code, third.stdout + third.stderr).toBe(11);
    expect(JSON.parse(third.stdout).failed_layer).toBe('linkage');
    // Without caches the kept edge is not read: the audit hashes from the genesis and passes.
    expect((await audit({ LEDGER_NO_CACHE: '1' })).code).toBe(0);
    expect(readFileSync(floorPath, 'utf8')).toBe(floorText);
  });
});
