// Issue 14.10 (and 14.2's doctor warning), in a real git repository: a user commits `.ledger/`
// against the README's advice; doctor warns. Work goes on and is published; then a plain
// `git checkout` of the committed `.ledger/` silently puts back an older, genuinely signed HEAD.
// The next writer must refuse to build on it (SPEC 5: exit 3, the cause named, nothing changed),
// not fork the log; restoring the newer ledger lets work go on.
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, scenario, type Scenario } from './kit.js';
import { TZ_FILES } from './tz-project.js';

let sc: Scenario;
afterEach(() => sc?.cleanup());

const CP = ['--done', 'ran the suite', '--state', '14 pass, 2 fail on the timezone helper', '--next', 'fix toLocal() for negative offsets'];

describe('when a user commits .ledger/ and a git checkout rolls it back', () => {
  it('doctor warns on the tracked ledger (exit 0)', () => {
    sc = scenario('tzapp', TZ_FILES);
    git(sc.root, 'add', '-f', '.ledger');
    sc.commit('commit the ledger (against the advice)');
    const d = sc.ledger(['doctor']);
    expect(d.code, d.stdout).toBe(0);
    expect(d.stdout).toMatch(/^warn {2}ledger in git: git tracks files in \.ledger\//m);
  });

  // Fails until branch `store-guard` lands (a writer's mark outside the ledger, SPEC 5): on main
  // the checkpoint after the checkout is refused only by accident of the fold, and codex's start
  // forks the log at the rolled-back seq. Drop `.fails` when it is merged.
  it('refuses every writer on the rolled-back ledger (exit 3, nothing changed), until the newer ledger is restored', () => {
    sc = scenario('tzapp', TZ_FILES);
    sc.ok(['start', 'fix-timezone', '--agent', 'claude', '--summary', 'fix toLocal() for negative offsets']);
    git(sc.root, 'add', '-f', '.ledger');
    sc.commit('commit the ledger (against the advice)');
    sc.ok(['checkpoint', 'fix-timezone', '--agent', 'claude', ...CP]);
    const newer = join(sc.base, 'ledger-newer');
    cpSync(sc.ledgerDir, newer, { recursive: true });

    // `git checkout -- .ledger` puts back the committed records.jsonl and HEAD: seq 1, signed.
    git(sc.root, 'checkout', '--', '.ledger');
    expect(sc.ledger(['head', '--json']).stdout).toContain('"seq":1');

    for (const args of [
      ['checkpoint', 'fix-timezone', '--agent', 'claude', ...CP],
      ['start', 'fix-timezone', '--agent', 'codex', '--summary', 'take it', '--takeover', '--force', '--reason', 'claude is gone'],
      ['start', 'other-item', '--agent', 'codex', '--summary', 'something else'],
      ['append', 'handoff', '--op', 'x', '--exec', 'e1', '--outcome', 'success', '--agent', 'codex'],
    ]) {
      const r = sc.refused(args, 3, 'OP_ROLLBACK');
      expect(r.stderr).toContain('this writer has published through seq 2; the ledger was rolled back');
    }

    // Restoring the newer ledger: work goes on where it was.
    rmSync(sc.ledgerDir, { recursive: true });
    cpSync(newer, sc.ledgerDir, { recursive: true });
    expect(sc.ok(['checkpoint', 'fix-timezone', '--agent', 'claude', ...CP]).seq).toBe(3);
    expect(sc.ok(['audit']).failed_layer).toBeNull();
  });
});
