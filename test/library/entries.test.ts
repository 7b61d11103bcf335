// The package's two entries, from the built package: `handoff-ledger` (the curated API) and
// `handoff-ledger/formats` (the primitives under it). `npm test` builds first.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, scratch } from '../helpers/cli.js';
import { FIXED_SEED } from '../helpers/fixed-keys.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { types: string; default: string }> };

describe('when a program imports the package', () => {
  it('names both entries in the exports map, each built with its types', () => {
    expect(Object.keys(pkg.exports)).toEqual(['.', './formats']);
    expect(pkg.exports['./formats']).toEqual({ types: './dist/src/formats.d.ts', default: './dist/src/formats.js' });
    for (const e of Object.values(pkg.exports)) for (const f of [e.types, e.default]) expect(existsSync(join(ROOT, f)), f).toBe(true);
  });

  it('gets the primitives from handoff-ledger/formats, and they agree with what the Ledger writes', async () => {
    const formats = await import(join(ROOT, 'dist/src/formats.js'));
    for (const name of ['canonicalJson', 'canonicalLine', 'recordId', 'headDigest', 'digestOf', 'createSigner', 'signingMessage', 'verifySig', 'verifyReference', 'parseTrust', 'pinProblem', 'trustEntry', 'parseSecretKeyFile', 'checkEvidence', 'recordProblems', 'draftProblems', 'headProblems']) {
      expect(typeof formats[name], name).toBe('function');
    }
    expect(formats.KINDS).toContain('handoff');
    expect(typeof formats.realFileOps.open).toBe('function');
    const { Ledger } = await import(join(ROOT, 'dist/src/index.js'));
    const s = scratch('ledger-entries-');
    try {
      const { ledger } = Ledger.init({ dir: join(s.dir, '.ledger'), key: FIXED_SEED, agent: 'harness' });
      const a = ledger.append({ kind: 'handoff', agent: 'lib', logical_operation_id: 'op', execution_id: 'e1', outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }).records[0];
      expect(formats.recordId(a.record)).toBe(a.id);
      expect(formats.verifySig('record', a.id, a.record.sig)).toBe(true);
      expect(formats.recordProblems(a.record)).toEqual([]);
      expect(formats.headDigest(ledger.head())).toMatch(/^sha256:[0-9a-f]{64}$/);
      const line = readFileSync(join(s.dir, '.ledger/records.jsonl'), 'utf8').split('\n')[1];
      expect(formats.canonicalLine(a.record)).toBe(line + '\n');
    } finally {
      s.cleanup();
    }
  });

  it('resolves both by the package name (a self-reference through the exports map)', () => {
    const script = `const m = await import('${pkg.name}'); const f = await import('${pkg.name}/formats');
      console.log(JSON.stringify({ ledger: typeof m.Ledger, audit: typeof m.auditLedger, exit: m.EXIT.hold, recordId: typeof f.recordId, inMain: 'recordId' in m }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ledger: 'function', audit: 'function', exit: 20, recordId: 'function', inMain: false });
  });

  it('keeps the main entry to the curated list: no transact, no second audit, no raw appenders', async () => {
    const main = await import(join(ROOT, 'dist/src/index.js'));
    expect(Object.keys(main).sort()).toEqual([
      'EXIT', 'EXIT_MEANINGS', 'Ledger', 'LedgerError', 'STATUS_MAX_ROWS', 'TERMS', 'auditLedger', 'currencyLine', 'digestSource', 'exitCodeFor', 'formatGateText', 'formatPendingText', 'formatReportText', 'formatStatus',
      'holdKind', 'initWitness', 'locateLedger', 'quoted', 'readPolicy', 'readProof', 'readSecretKey', 'readTrust', 'resumeStep', 'serveWitnessDir', 'takenFromLine', 'takeoverStep', 'witnessRefusal', 'writeSecretKey',
    ]);
  });
});
