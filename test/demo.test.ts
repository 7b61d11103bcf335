// `npm run demo` as a newcomer runs it, piped: the built demo (dist/src/demo/demo.js, after the suite's
// build) as a real process with NO_COLOR=1. It must exit 0, print no colour, tell every beat of the
// story in order, leave its temporary directory in the state it describes, and end with commands
// that work when pasted into a shell.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEMO = join(ROOT, 'dist/src/demo/demo.js');

let run: { code: number | null; stdout: string; stderr: string };
let work = '';

beforeAll(() => {
  if (!existsSync(DEMO)) throw new Error(`${DEMO} is missing: run \`npm run build\` first (npm test does)`);
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.FORCE_COLOR;
  const r = spawnSync(process.execPath, [DEMO], { cwd: ROOT, env, encoding: 'utf8', timeout: 280_000 }); // a hang guard only, under the hook timeout
  run = { code: r.status, stdout: r.stdout, stderr: r.stderr };
  work = /A fresh temporary directory and a fresh key: (.+)$/m.exec(run.stdout)?.[1] ?? '';
});

afterAll(() => {
  if (work && work.includes('ledger-demo-')) rmSync(work, { recursive: true, force: true });
});

/** The text after `from` up to the next numbered heading (or the end). */
function section(title: RegExp): string {
  const start = run.stdout.search(title);
  expect(start, `no heading ${title}`).toBeGreaterThanOrEqual(0);
  const rest = run.stdout.slice(start + 1);
  const next = rest.search(/\n(\d+\. |Try it yourself)/);
  return next < 0 ? rest : rest.slice(0, next);
}

describe('npm run demo (piped, NO_COLOR=1)', () => {
  it('exits 0, quietly on stderr, with no colour codes', () => {
    expect(run.code, `stderr: ${run.stderr}\nstdout tail: ${run.stdout.slice(-2000)}`).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).not.toMatch(/\x1b\[/);
    expect(work).toMatch(/ledger-demo-/);
    expect(existsSync(work)).toBe(true);
  });

  it('tells the story in twelve numbered steps, in order', () => {
    const numbers = [...run.stdout.matchAll(/^(\d+)\. \S/gm)].map((m) => Number(m[1]));
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    // Every ledger command shown is followed by its checked exit code.
    const commands = run.stdout.match(/^\$ ledger /gm) ?? [];
    const checked = run.stdout.match(/^-> exit \d+.*, as expected$/gm) ?? [];
    expect(commands.length).toBeGreaterThanOrEqual(18);
    expect(checked.length).toBe(commands.length);
  });

  it('retries under one logical operation: execution_001 times out, execution_002 succeeds with evidence and an invariant', () => {
    expect(run.stdout).toContain('--exec execution_001 --outcome timeout');
    expect(run.stdout).toContain("--evidence schema=db/schema.sql --invariant 'tests=ok:14 passed, 0 failed'");
  });

  it('the gate passes, holds on state_current when the schema changes, passes again and is consumed, then holds on a revocation', () => {
    expect(section(/^4\. /m)).toMatch(/^proceed: migrate_schema_17/m);
    const stale = section(/^6\. /m);
    expect(stale).toMatch(/^hold: migrate_schema_17: state_current: evidence schema: file:db\/schema\.sql has changed/m);
    expect(stale).toMatch(/^ {2}FAIL state_current/m);
    expect(stale).toContain('-> exit 20: hold, as expected');
    const restored = section(/^7\. /m);
    expect(restored).toMatch(/^proceed: migrate_schema_17/m);
    expect(restored).toMatch(/^consumed as deploy_api_18: sha256:[0-9a-f]{64} \(seq 3\)/m);
    const revoked = section(/^8\. /m);
    expect(revoked).toMatch(/^\$ ledger revoke sha256:[0-9a-f]{64} --agent reviewer --reason /m);
    expect(revoked).toMatch(/^hold: migrate_schema_17: handoff_valid: .*was revoked by/m);
  });

  it('a flipped byte in a copy: the audit names the layer and the seq (exit 11), the real ledger audits clean', () => {
    const audit = section(/^9\. /m);
    expect(audit).toMatch(/^pass: 5 records verified/m);
    expect(audit).toMatch(/^\$ printf 5 \| dd of=tampered\/records\.jsonl bs=1 seek=\d+ conv=notrunc/m);
    expect(audit).toMatch(/^linkage fails at seq 3: prev_tail_hash is not the id of seq 2$/m);
    expect(audit).toContain('-> exit 11: audit: linkage, as expected');
  });

  it('a torn write is a warning, then moved into quarantine, then the audit is clean', () => {
    const torn = section(/^10\. /m);
    expect(torn).toMatch(/^warning: \d+ bytes past HEAD's size \d+ are unpublished/m);
    expect(torn).toMatch(/^moved \d+ unpublished bytes past byte \d+ to .*quarantine\/at-\d+-[0-9a-f]+\.bin$/m);
    expect(readdirSync(join(work, '.ledger', 'quarantine'))).toHaveLength(1);
  });

  it('the handoff-log round: start, checkpoint running a real test command, resume, finish, a gate, and both views', () => {
    const log = section(/^11\. /m);
    expect(log).toMatch(/^started add-email-index as claude/m);
    expect(log).toContain("--tests-cmd 'node check-schema.mjs'");
    expect(log).toMatch(/^tests: `node check-schema\.mjs` exited 0/m);
    expect(log).toContain('| 3 passed, 0 failed');
    expect(log).toMatch(/^ {2}next: "apply it on staging/m);
    expect(log).toMatch(/add-email-index is closed/);
    expect(log).toMatch(/^proceed: add-email-index/m);
    const views = section(/^12\. /m);
    expect(views).toMatch(/^\$ cat HANDOFF\.md\n# HANDOFF\n/m);
    expect(views).toMatch(/^\$ cat HANDOFF\.yml\n# ledger-view through seq 7 /m);
    expect(views).toMatch(/^latest:\n {2}seq: 7\n/m);
    expect(existsSync(join(work, 'HANDOFF.md'))).toBe(true);
    expect(existsSync(join(work, 'HANDOFF.yml'))).toBe(true);
  });

  it('ends with commands that work when pasted into a shell', () => {
    const tail = run.stdout.slice(run.stdout.indexOf('Try it yourself'));
    expect(tail).toContain(work);
    const lines = tail.split('\n').filter((l) => l.startsWith('  ')).map((l) => l.slice(2));
    expect(lines[0]).toMatch(/^cd /);
    expect(lines[1]).toMatch(/^alias ledger=/);
    const bash = spawnSync('bash', ['--version'], { encoding: 'utf8' });
    if (bash.status !== 0) return; // no bash here: the structure checks above still ran
    const script = join(work, 'try-next.sh');
    writeFileSync(script, lines.join('\n') + '\n');
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LEDGER_')) env[k] = v;
    const r = spawnSync('bash', ['-O', 'expand_aliases', script], { cwd: ROOT, env, encoding: 'utf8', timeout: 280_000 }); // a hang guard only, under the hook timeout
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('exit 11'); // the tampered copy
    expect(r.stdout).toContain('exit 20'); // the revoked handoff
    expect(r.stdout).toContain('"ok":true'); // execution_003 supersedes it, and the gate passes
    expect(r.stdout).toMatch(/add-email-index: finished \(success\)/);
  });
});
