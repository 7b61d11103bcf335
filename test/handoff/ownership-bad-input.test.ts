// The bad-input table of issue 14's verbs and flags (start --takeover --force --reason, release,
// note, status, resume without a slug): each row exits with its documented code and error code,
// prints one line on stderr, and leaves records.jsonl, HEAD, HANDOFF.md and HANDOFF.yml
// byte-identical. In a real git repository with a live item (fix-tz, claude's) and a released one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CP, ok, type Project } from './helpers.js';
import { gitProject, refusedUnchanged } from './git-project.js';

let p: Project;
beforeAll(async () => {
  p = await gitProject();
  await ok(p, 'start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()');
  await ok(p, 'checkpoint', 'fix-tz', '--agent', 'claude', ...CP);
  await ok(p, 'start', 'docs', '--agent', 'gemini', '--summary', 'docs');
  await ok(p, 'release', 'docs', '--agent', 'gemini');
});
afterAll(() => p.cleanup());

const LONG = 'x'.repeat(4097);
const START = ['start', 'fix-tz', '--agent', 'codex', '--summary', 'take it'];

// [what the user did, argv, exit code, error code, a phrase of the one-line reason]
const ROWS: [string, string[], number, string, string][] = [
  ['--force without --takeover', [...START, '--force', '--reason', 'r'], 2, 'USAGE', '--force applies only with --takeover'],
  ['--takeover --force without --reason', [...START, '--takeover', '--force'], 2, 'USAGE', 'needs --reason TEXT'],
  ['--reason empty', [...START, '--takeover', '--force', '--reason', ''], 2, 'USAGE', '--reason'],
  ['--reason blank', [...START, '--takeover', '--force', '--reason', '  \n '], 2, 'USAGE', '--reason is empty'],
  ['--reason over 4096 characters', [...START, '--takeover', '--force', '--reason', LONG], 2, 'USAGE', '--reason is 4097 characters; at most 4096'],
  ['--reason twice', [...START, '--takeover', '--force', '--reason', 'a', '--reason', 'b'], 2, 'USAGE', 'given 2 times'],
  ['--reason without --takeover', [...START, '--reason', 'why'], 2, 'USAGE', '--reason applies only with --takeover'],
  ['--takeover of a live lease without --force', [...START, '--takeover'], 2, 'INPUT_CONFLICT', 'taken over only with --force --reason'],
  ['--takeover of a released item', ['start', 'docs', '--agent', 'codex', '--summary', 's', '--takeover'], 2, 'INPUT_REFUSED', 'nothing to take over'],
  ['--takeover --force of a slug never started', ['start', 'nope', '--agent', 'codex', '--summary', 's', '--takeover', '--force', '--reason', 'r'], 2, 'INPUT_REFUSED', 'has never been started'],
  ['release with no --agent', ['release', 'fix-tz'], 2, 'USAGE', '--agent is required'],
  ['release with a bad --agent', ['release', 'fix-tz', '--agent', 'bad agent'], 2, 'USAGE', '--agent must be'],
  ['release of a bad slug', ['release', 'bad slug!', '--agent', 'claude'], 2, 'USAGE', 'SLUG must be'],
  ['release with an empty --note', ['release', 'fix-tz', '--agent', 'claude', '--note', ''], 2, 'USAGE', '--note'],
  ['release with a --note over 4096 characters', ['release', 'fix-tz', '--agent', 'claude', '--note', LONG], 2, 'USAGE', 'at most 4096'],
  ['release by someone not the owner', ['release', 'fix-tz', '--agent', 'codex'], 2, 'INPUT_CONFLICT', 'only the owner may release fix-tz'],
  ['release of an item already released', ['release', 'docs', '--agent', 'gemini'], 2, 'INPUT_REFUSED', 'was released by gemini'],
  ['release of a slug never started', ['release', 'nope', '--agent', 'claude'], 2, 'INPUT_NOT_FOUND', 'no work item nope'],
  ['release with a bad --wait', ['release', 'fix-tz', '--agent', 'claude', '--wait', 'soon'], 2, 'USAGE', '--wait expects a duration'],
  ['note with no --text', ['note', 'fix-tz', '--agent', 'reviewer'], 2, 'USAGE', '--text is required'],
  ['note with an empty --text', ['note', 'fix-tz', '--agent', 'reviewer', '--text', ''], 2, 'USAGE', '--text'],
  ['note with a blank --text', ['note', 'fix-tz', '--agent', 'reviewer', '--text', ' \t\n'], 2, 'USAGE', '--text is empty'],
  ['note with --text twice', ['note', 'fix-tz', '--agent', 'reviewer', '--text', 'a', '--text', 'b'], 2, 'USAGE', 'given 2 times'],
  ['note with no --agent', ['note', 'fix-tz', '--text', 'hi'], 2, 'USAGE', '--agent is required'],
  ['note on a slug never started', ['note', 'nope', '--agent', 'reviewer', '--text', 'hi'], 2, 'INPUT_NOT_FOUND', 'no work item nope'],
  ['status with a bad --agent', ['status', '--agent', 'bad agent'], 2, 'USAGE', '--agent must be'],
  ['status where there is no ledger', ['status', '--dir', 'no-such-ledger'], 2, 'INPUT_NOT_FOUND', 'no ledger at'],
  ['resume without a slug and a bad --agent', ['resume', '--agent', 'bad agent'], 2, 'USAGE', '--agent must be'],
  ['resume of a slug never started, with an --agent', ['resume', 'nope', '--agent', 'claude'], 2, 'INPUT_NOT_FOUND', 'no work item nope'],
];

describe('bad input to start --takeover/--force/--reason, release, note, status and resume', () => {
  for (const [what, argv, exit, code, phrase] of ROWS) {
    it(`${what}: exit ${exit} (${code}), one line, nothing changed`, async () => {
      const r = await refusedUnchanged(p, argv, exit, code);
      expect(r.stderr).toContain(phrase);
    });
  }
});
