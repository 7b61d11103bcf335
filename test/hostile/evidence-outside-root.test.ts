// Issue 13 finding 13: the gate was a hash oracle, digesting and printing the SHA-256 of any path
// a record named. Evidence lives inside the project root (SPEC 9): append refuses anything else
// (exit 2, nothing changed), and the gate holds on it without reading it.
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkEvidence, type EvidenceReadOps } from '../../src/causal/evidence.js';
import { realEvidenceOps } from '../../src/causal/evidence/read-ops.js';
import { scratch } from '../helpers/cli.js';
import { project, type Project } from '../causal/kit.js';
import { appendRaw, expectRefusedEvidence, ledgerBytes } from './evidence-kit.js';

let p: Project;
let outside: ReturnType<typeof scratch>;
afterEach(() => {
  p?.cleanup();
  outside?.cleanup();
});

const SECRET = 'the contents of a file outside the project\n';
const secretHex = createHash('sha256').update(SECRET).digest('hex');

async function setup(): Promise<{ secret: string }> {
  p = await project();
  outside = scratch('ledger-outside-');
  const secret = join(outside.dir, 'secret.txt');
  writeFileSync(secret, SECRET);
  symlinkSync(secret, join(p.dir, 'link-out')); // a link whose target leaves the root
  symlinkSync(outside.dir, join(p.dir, 'dir-out')); // a parent component that leaves the root
  mkdirSync(join(p.dir, 'inner'));
  symlinkSync('../../', join(p.dir, 'inner', 'up')); // a relative link climbing out
  return { secret };
}

const sources = (secret: string, root: string) => [
  'file:/etc/shadow',
  '/etc/passwd',
  'dir:/etc',
  'file:/proc/kmsg',
  `file:${secret}`,
  `file:${relative(root, secret)}`,
  'file:../../x',
  'file:link-out',
  'link-out',
  'file:dir-out/secret.txt',
  'dir:dir-out',
  `file:inner/up/${relative(join(root, '..'), secret)}`,
  'dir:inner/up',
];

describe('when a handoff names evidence outside the project root (/etc/shadow, ../../x, an absolute path, a link out)', () => {
  it('append refuses each one (exit 2, one line) and changes nothing, without printing a digest', async () => {
    const { secret } = await setup();
    for (const source of sources(secret, p.dir)) {
      const err = await expectRefusedEvidence(p, source, /outside the project root/);
      expect(err).not.toContain(secretHex);
    }
  });

  it('the gate holds on each one, says why, and neither reads it nor prints its digest', async () => {
    const { secret } = await setup();
    for (const [i, source] of sources(secret, p.dir).entries()) {
      // Recorded with a made-up digest (a hostile record, or one from before the rule).
      appendRaw(p, `op${i}`, { e: { source, digest: 'sha256:' + '0'.repeat(64) } });
      const before = ledgerBytes(p);
      const g = await p.gate(`op${i}`);
      expect(g.code, source).toBe(20);
      expect(g.r.failed_term).toBe('state_current');
      expect(g.r.evidence[0]).toMatchObject({ source, current: false, actual: null });
      expect(g.r.evidence[0].reason).toContain('outside the project root and is not read');
      expect(JSON.stringify(g.r) + g.stderr).not.toContain(secretHex);
      const text = await p.run(['gate', `op${i}`]);
      expect(text.code).toBe(20);
      expect(text.stdout + text.stderr).not.toContain(secretHex);
      expect(ledgerBytes(p)).toEqual(before);
    }
  });

  it('no path outside the root is even looked at (every read the check makes is recorded)', async () => {
    const { secret } = await setup();
    const touched: string[] = [];
    const log = (f: (p: Buffer) => unknown) => (q: Buffer) => {
      touched.push(q.toString());
      return f(q);
    };
    const ops: EvidenceReadOps = { ...realEvidenceOps, lstat: log(realEvidenceOps.lstat) as EvidenceReadOps['lstat'], readlink: log(realEvidenceOps.readlink) as EvidenceReadOps['readlink'], readdir: log(realEvidenceOps.readdir) as EvidenceReadOps['readdir'], openRead: log(realEvidenceOps.openRead) as EvidenceReadOps['openRead'] };
    for (const source of sources(secret, p.dir)) {
      const check = checkEvidence('e', { source, digest: 'sha256:' + secretHex }, { root: p.dir, ledgerDir: p.ledger, ops });
      expect(check, source).toMatchObject({ current: false, actual: null });
    }
    expect(touched.length).toBeGreaterThan(0); // the links inside were read, to see where they go
    for (const t of touched) expect(relative(p.dir, t).startsWith('..'), t).toBe(false);
  });

  it('a link that stays inside the root is still followed, and a relative path from a subfolder still works', async () => {
    await setup();
    p.write('src/a.txt', 'a\n');
    symlinkSync('src/a.txt', join(p.dir, 'link-in'));
    const r = await p.run(['append', 'handoff', '--op', 'in', '--exec', 'e1', '--outcome', 'success', '--evidence', 'a=link-in', '--evidence', 'b=file:inner/../src/a.txt', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect((await p.gate('in')).code).toBe(0);
  });
});
