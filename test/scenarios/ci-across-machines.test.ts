// docs/across-machines.md, "A CI job that gates on a handoff made on a laptop", from the user's
// side: the job's `run:` steps taken from that page as written and run by a real `sh`, step by
// step as a CI does (the first that exits non-zero fails the job), on a runner that is a real
// `git clone` of a bare remote. The laptop is another clone that joined first, as the page's
// "Two clones and a bare remote" shows. The laptop finishes a work item; the runner's job joins,
// gates (proceeds, consumes) and deploys. After the laptop revokes that handoff, the next job
// holds at the gate (20, the revocation named) and does not deploy. The page's witness is up
// throughout (ci-team.ts); rewind-ci.test.ts is the job against a rewound ref.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshot } from '../helpers/cli.js';
import { ciSteps, team } from './ci-team.js';

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

describe("when a CI runner gates on a handoff finished on a laptop (the documented CI job)", () => {
  it('the job proceeds and deploys; after the laptop revokes the handoff, the next job holds at the gate and does not deploy', async () => {
    const t = await team();
    cleanup = t.cleanup;
    t.must(t.laptop, t.lenv, 'ledger start migrate_schema_17 --summary "migrate the schema to 17"');
    const fin = JSON.parse(t.must(t.laptop, t.lenv, 'ledger finish migrate_schema_17 --done "migration written" --state "applied on staging" --next "deploy it" --outcome success --invariant tests=ok --json'));
    expect(fin.ok).toBe(true);

    const r1 = t.runner();
    const first = r1.job();
    expect(first.code, JSON.stringify(first.last)).toBe(0);
    expect(first.steps.map((s) => s.r.code)).toEqual(ciSteps().map(() => 0));
    expect(t.deploys(r1.home)).toBe('deployed\n');
    // The consume record is published: the laptop sees it after a sync.
    t.must(t.laptop, t.lenv, 'ledger sync');
    const consumed = readFileSync(join(t.laptop, '.ledger', 'records.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((r) => r.kind === 'consume');
    expect(consumed).toMatchObject([{ agent: 'ci', consumer: 'deploy', logical_operation_id: 'migrate_schema_17' }]);

    // The laptop withdraws the handoff; the revoke is published before the command returns 0.
    const handoffId = String(fin.id ?? fin.record?.id);
    expect(handoffId).toMatch(/^sha256:/);
    t.must(t.laptop, t.lenv, `ledger revoke ${handoffId} --reason "ran against staging, not prod"`);

    const r2 = t.runner();
    const second = r2.job();
    expect(second.code, JSON.stringify(second.last)).toBe(20);
    expect(second.last.step).toMatch(/^ledger gate /);
    // Held for the revocation (the first line names the failing term and why), not for the
    // first job's consumption.
    const hold = second.last.r.stdout.split('\n')[0];
    expect(hold).toMatch(/^hold: migrate_schema_17: handoff_valid: .*revoked/);
    expect(hold).not.toMatch(/not revoked|already consumed/);
    expect(t.deploys(r2.home)).toBe('');
    expect(t.must(r2.dir, r2.env, 'ledger audit --json')).toContain('"ok":true');
  });
});

describe('when the same job runs again on a runner that keeps its workspace (self-hosted)', () => {
  it('the join step refuses as the docs say (exit 2, nothing changed); with `ledger sync` as that step, the duplicate delivery holds', async () => {
    const t = await team();
    cleanup = t.cleanup;
    const h1 = JSON.parse(t.must(t.laptop, t.lenv, 'ledger append handoff --op migrate_schema_17 --exec e1 --outcome success --json'));
    const r = t.runner();
    expect(r.job().code).toBe(0);
    expect(t.deploys(r.home)).toBe('deployed\n');
    const before = snapshot(join(r.dir, '.ledger'));

    const again = r.job();
    expect(again.code).toBe(2);
    expect(again.last.step).toMatch(/^ledger init --remote /);
    expect(again.last.r.stderr).toMatch(/already joined to a remote on this machine/);
    expect(again.last.r.stderr.trim().split('\n')).toHaveLength(1);
    expect(snapshot(join(r.dir, '.ledger'))).toEqual(before);

    // The docs: on such a runner that step is `ledger sync`. The handoff was consumed by the
    // first job, so this delivery holds at the gate and does not deploy twice.
    const kept = ciSteps().map((s) => (/^ledger init --remote /.test(s) ? 'ledger sync' : s));
    const third = r.job(kept);
    expect(third.code, JSON.stringify(third.last)).toBe(20);
    expect(third.last.step).toMatch(/^ledger gate /);
    expect(t.deploys(r.home)).toBe('deployed\n');

    // A new handoff from the laptop: the kept runner's next job deploys it.
    // (new evidence, superseding the first: the same evidence again would be a re-drive, consumed
    // exactly once; other evidence that supersedes nothing would be a conflicting successor)
    t.must(t.laptop, t.lenv, `ledger append handoff --op migrate_schema_17 --exec e2 --outcome success --evidence script=file:deploy.sh --supersedes ${h1.id}`);
    const fourth = r.job(kept);
    expect(fourth.code, JSON.stringify(fourth.last)).toBe(0);
    expect(t.deploys(r.home)).toBe('deployed\ndeployed\n');
  });
});
