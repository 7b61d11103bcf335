// `checkpoint --tests-cmd`: the ledger runs the suite itself and records the real exit code, the
// last lines of the output, and the digest of all of it, whose bytes go to the blob store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CP, expectRefused, ok, project, records, type Project } from './helpers.js';
import { runLedger } from '../helpers/cli.js';
import { projectState } from '../helpers/project-state.js';
import { excerptOf, plainText } from '../../src/handoff/excerpt.js';
import { readBlob } from '../../src/handoff/blobs.js';
import type { TestsRun } from '../../src/record.js';

let p: Project;
beforeEach(async () => {
  p = await project();
  await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
});
afterEach(() => p.cleanup());

const sha = (b: Buffer) => 'sha256:' + createHash('sha256').update(b).digest('hex');
const lastTests = () => (records(p).at(-1) as { tests?: TestsRun }).tests!;

describe('a failing suite', () => {
  it('is recorded with its real exit code, its last lines and the digest of all its output', async () => {
    // 60 lines on stdout, a failure on stderr, exit 3: like a test runner with 2 failures.
    writeFileSync(join(p.dir, 'suite.sh'), [
      'i=1; while [ $i -le 60 ]; do echo "ok $i"; i=$((i+1)); done',
      'echo "FAIL tz helper: toLocal() returned 17:00" >&2',
      'echo "14 pass, 2 fail"',
      'exit 3',
    ].join('\n'));
    const res = await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'sh suite.sh');
    const t = lastTests();
    expect(t.command).toBe('sh suite.sh');
    expect(t.exit_code).toBe(3);
    const lines = t.excerpt.split('\n');
    expect(lines).toHaveLength(40);
    expect(lines.slice(-2)).toEqual(['FAIL tz helper: toLocal() returned 17:00', '14 pass, 2 fail']);
    expect(lines[0]).toBe('ok 23');
    // the blob holds every byte, stdout and stderr interleaved as written, under its digest
    const blob = readBlob(p.ledger, t.digest);
    expect(sha(blob)).toBe(t.digest);
    expect(blob.length).toBe(t.bytes);
    expect(blob.toString()).toMatch(/^ok 1\nok 2\n[\s\S]*ok 60\nFAIL tz helper[^\n]*\n14 pass, 2 fail\n$/);
    expect((res.tests as { blob: string }).blob).toBe(join(p.ledger, 'blobs', 'sha256', t.digest.slice(7)));
  });

  it('runs from the project root when called from a subdirectory (issue 26), and records where', async () => {
    mkdirSync(join(p.dir, 'sub'));
    const r = await runLedger(['checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--dir', '../.ledger', '--key', '../keys/harness.key', '--tests-cmd', 'pwd'], { cwd: join(p.dir, 'sub') });
    expect(r.code, r.stderr).toBe(0);
    expect(realpathSync(lastTests().excerpt)).toBe(realpathSync(p.dir));
    expect(lastTests().exit_code).toBe(0);
    // Not inside a git work tree: the place is recorded, git is null (docs/formats.md "The handoff log kinds").
    expect(lastTests().workdir).toEqual({ path: p.dir, git: null });
  });

  it('runs in --tests-cwd when it is given (relative to the caller), and says where in its output', async () => {
    mkdirSync(join(p.dir, 'sub'));
    const r = await runLedger(['checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--dir', '../.ledger', '--key', '../keys/harness.key', '--tests-cmd', 'pwd', '--tests-cwd', '.'], { cwd: join(p.dir, 'sub') });
    expect(r.code, r.stderr).toBe(0);
    expect(realpathSync(lastTests().excerpt)).toBe(realpathSync(join(p.dir, 'sub')));
    expect(lastTests().workdir).toEqual({ path: join(p.dir, 'sub'), git: null });
    expect(r.stdout).toContain(`tests: \`pwd\` exited 0 in ${join(p.dir, 'sub')};`);
  });

  it('a run outside the project (a caller elsewhere) runs where the caller is', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'ledger-elsewhere-'));
    try {
      const r = await runLedger(['checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--dir', join(p.dir, '.ledger'), '--key', join(p.dir, 'keys/harness.key'), '--tests-cmd', 'pwd'], { cwd: elsewhere });
      expect(r.code, r.stderr).toBe(0);
      expect(lastTests().workdir?.path).toBe(elsewhere);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('records a command killed by a signal as 128 + N', async () => {
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'echo before; kill -9 $$');
    expect(lastTests().exit_code).toBe(137);
    expect(lastTests().excerpt).toBe('before');
  });

  it('Policy: a command stopped on timeout is recorded as exit 124, with a warning, and keeps what it printed', async () => {
    // The shell prints at once and the timeout comes 1.5 s later; a starved machine may not even
    // have started the shell by then, so a run that recorded no output is tried again with a
    // longer timeout. What is checked is what a timeout records, never how fast a shell starts.
    for (const timeout of ['1500ms', '10s', '60s']) {
      const res = await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'echo started; sleep 300', '--tests-timeout', timeout);
      expect(lastTests().exit_code).toBe(124);
      expect(res.warnings.join('\n')).toContain('recorded as exit code 124');
      if (lastTests().excerpt === '' && timeout !== '60s') continue;
      expect(lastTests().excerpt).toBe('started');
      break;
    }
  });

  it('does not call an honest partial verification a false claim (14 pass, 2 fail: exit 1)', async () => {
    const res = await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--verified', 'parser', '--tests-cmd', 'echo "14 pass, 2 fail"; exit 1');
    expect(res.warnings).toEqual([]);
    expect(lastTests().nothing_tested).toBeUndefined();
  });

  it('calls out a command that tested nothing (127: not found) in the warnings, the record and resume', async () => {
    const res = await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--verified', 'parser', '--tests-cmd', 'pytset -q');
    expect(res.warnings).toEqual([
      '--tests-cmd tested nothing: the command was not found (exit 127); recorded as it ran, so that the next session does not read it as a test run',
      '1 item claimed as verified, but the test command tested nothing',
    ]);
    expect(lastTests()).toMatchObject({ exit_code: 127, nothing_tested: 'the command was not found (exit 127)' });
    const resume = await runLedger(['resume', 'fix-tz'], { cwd: p.dir });
    expect(resume.stdout).toContain('NOTHING WAS TESTED: the command was not found (exit 127)');
  });
});

describe('--tests TEXT (output as reported)', () => {
  it('is kept whole in the blob store, with no command or exit code', async () => {
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests', '14 pass\n2 fail');
    const t = lastTests();
    expect(t).toEqual({ excerpt: '14 pass\n2 fail', digest: sha(Buffer.from('14 pass\n2 fail')), bytes: 14 });
    expect(readBlob(p.ledger, t.digest).toString()).toBe('14 pass\n2 fail');
  });
});

describe('a blob that was altered', () => {
  it('is refused on read, naming both digests', async () => {
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests', 'all good');
    const t = lastTests();
    writeFileSync(join(p.ledger, 'blobs', 'sha256', t.digest.slice(7)), 'all bad');
    expect(() => readBlob(p.ledger, t.digest)).toThrow(`expected ${t.digest}, computed ${sha(Buffer.from('all bad'))}`);
  });
});

describe('excerptOf', () => {
  it('drops colour codes and keeps what a carriage return drew last', () => {
    expect(excerptOf(Buffer.from('\x1b[31mFAIL\x1b[0m x\n50%\r100%\n'), false)).toBe('FAIL x\n100%');
  });

  it('drops the first, partial line of a cut window (and the half character in it)', () => {
    const bytes = Buffer.from('ééé\nsecond\nthird\n');
    expect(excerptOf(bytes.subarray(1), true)).toBe('second\nthird');
  });

  it('keeps control characters out', () => {
    expect(plainText('a\x00b\x07c')).toBe('a\uFFFDb\uFFFDc');
  });
});


describe('the environment of --tests-cmd', () => {
  it('names no key: every LEDGER_* variable and any variable naming the key file are taken out', async () => {
    const keyFile = join(p.dir, 'keys/harness.key');
    const r = await runLedger(['checkpoint', 'fix-tz', ...CP, '--tests-cmd', 'env', '--json'], {
      cwd: p.dir,
      env: { LEDGER_AGENT: 'claude', LEDGER_KEY: 'keys/harness.key', LEDGER_TESTS_FLAVOUR: 'x', SIGNING_KEY_FILE: keyFile, RELATIVE_KEY: 'keys/harness.key', KEEP_ME: 'yes' },
    });
    expect(r.code, r.stderr).toBe(0);
    const env = readBlob(p.ledger, lastTests().digest).toString();
    expect(env).toMatch(/^KEEP_ME=yes$/m);
    expect(env).not.toMatch(/^LEDGER_/m);
    expect(env).not.toContain('SIGNING_KEY_FILE');
    expect(env).not.toContain('RELATIVE_KEY');
  });
});

describe('when a test command prints the signing key (the second line, one user)', () => {
  // The key is readable here (one user, as in a single-user setup): the scan keeps it out of
  // every record, blob and view, whatever form it is printed in.
  const seedOf = `const k=JSON.parse(require('fs').readFileSync('keys/harness.key','utf8'));const s=Buffer.from(k.secret_key,'base64url');`;
  const node = (expr: string) => `node -e "${seedOf}console.log(${expr})"`;
  const FORMS: [string, string][] = [
    ['the key file, as is', 'echo before; cat keys/harness.key; echo after'],
    ['the key file in base64, wrapped at 76', 'base64 keys/harness.key'],
    ['the seed in hex', node(`s.toString('hex')`)],
    ['the seed in HEX', node(`s.toString('hex').toUpperCase()`)],
    ['the seed in base64 std', node(`s.toString('base64')`)],
    ['the seed wrapped over lines of 5', node(`k.secret_key.match(/.{1,5}/g).join(String.fromCharCode(10))`)],
    ['16 characters from the middle of the seed', node(`k.secret_key.slice(12, 28)`)],
    ['the seed on stderr, from a background job', `${node('k.secret_key')} >&2 & wait`],
  ];
  for (const [what, cmd] of FORMS) {
    it(`refuses the checkpoint when the output holds ${what}: nothing recorded, no blob, views untouched`, async () => {
      const before = projectState(p.dir);
      const r = await p.run('checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', cmd, '--json');
      expect(r.code, r.stdout + r.stderr).toBe(3);
      expect(JSON.parse(r.stdout).error.code).toBe('OP_INSECURE_KEY');
      expect(r.stdout).not.toContain(JSON.parse(readFileSync(join(p.dir, 'keys/harness.key'), 'utf8')).secret_key);
      expect(projectState(p.dir)).toEqual(before);
      expect(readdirSync(join(p.ledger, 'blobs', 'tmp'))).toEqual([]);
    });
  }

  it('refuses --tests TEXT that holds the key the same way', async () => {
    const before = projectState(p.dir);
    const key = readFileSync(join(p.dir, 'keys/harness.key'), 'utf8');
    await expectRefused(p, ['checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests', `ok 1\n${key}`], 3, 'OP_INSECURE_KEY');
    expect(projectState(p.dir)).toEqual(before);
  });

  it('does not refuse output that only looks like a key: the trust file, another key file', async () => {
    const other = await p.run('keygen', '--out', 'keys/other.key', '--name', 'other');
    expect(other.code, other.stderr).toBe(0);
    await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP, '--tests-cmd', 'cat keys/trust.json keys/other.key');
    expect(readBlob(p.ledger, lastTests().digest).toString()).toContain('"secret_key"');
  });
});
