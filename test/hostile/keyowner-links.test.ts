// Issue 23 findings 1 and 2, for real as two users: root holds the key and runs `ledger` for the
// agent (nobody) through sudo, in the agent's project. A link under `.ledger/` once made the key
// owner's routine writes follow it: `records.jsonl` a link to the key (HEAD removed) copied the
// key into a 0644 quarantine file and truncated the key; links at `blobs/sha256`, `blobs/tmp`
// and `quarantine/` made root write agent-chosen bytes into a root-only folder. Now no link is
// followed below the ledger (src/fs/confine.ts), and a `.ledger/` the agent can write is refused
// before anything is read (StrictModes). Every refusal: exit 3, one line, and the ledger, the
// views, the key and the folder outside byte-identical.
import { beforeEach, describe, expect, it } from 'vitest';
import { appendFileSync, chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keep } from '../helpers/cli.js';
import { projectState } from '../helpers/project-state.js';
import { AGENT, agentProjectRoot, asAgent, asKeyOwner, everything, giveToAgent, isRoot, keyState, oneLine, SKIP } from '../helpers/two-users.js';

let project: { dir: string };
let outside: { dir: string };
let ledger: string;
let key: string;
let stateEnv: Record<string, string>;

/**
 * The agent's project (0755, the agent's) with a ledger the key owner made and one work item
 * started, a root-only folder beside it, and the key owner's state directory: built once, put back
 * byte for byte (owners and modes too) before each test (helpers/cli.ts `keep`).
 */
const fixture = keep(() => {
  const { root, dir, env } = agentProjectRoot('ledger-links-');
  const out = join(root, 'outside');
  mkdirSync(out, { mode: 0o700 });
  writeFileSync(join(out, 'keep'), 'root only\n');
  const init = asKeyOwner(['init', '--name', 'links'], dir, env);
  expect(init.code, init.stderr).toBe(0);
  const start = asKeyOwner(['start', 'fix-tz', '--agent', 'claude', '--summary', 'fix toLocal()'], dir, env);
  expect(start.code, start.stderr).toBe(0);
  return { root, dir, out, env };
});

beforeEach(async () => {
  if (!isRoot) return;
  const f = await fixture();
  project = { dir: f.dir };
  outside = { dir: f.out };
  stateEnv = f.env;
  ledger = join(project.dir, '.ledger');
  key = join(project.dir, 'keys', 'harness.key');
});

/** What must not change, whatever the verb does. */
const before = () => ({ project: projectState(project.dir), key: keyState(key), outside: everything(outside.dir) });
const after = before;

/** Runs a verb as the key owner and asserts it was refused: `exit`, one line with `code`, nothing changed. */
function refused(args: string[], code: string, exit = 3): string {
  const was = before();
  const r = asKeyOwner([...args, '--json'], project.dir, stateEnv);
  expect(r.code, r.stderr).toBe(exit);
  expect(JSON.parse(r.stdout).error.code).toBe(code);
  const line = oneLine(r);
  expect(after()).toEqual(was);
  return line;
}

const CP = ['--agent', 'claude', '--done', 'ran the suite', '--state', 'red', '--next', 'fix it'];

describe.skipIf(!isRoot)(`a link planted under a .ledger/ the agent cannot write (${isRoot ? 'root and nobody' : SKIP})`, () => {
  it('records.jsonl a link to the key, HEAD removed: recover and append refuse; the key is not copied or cut', () => {
    rmSync(join(ledger, 'HEAD'));
    rmSync(join(ledger, 'records.jsonl'));
    symlinkSync(key, join(ledger, 'records.jsonl'));
    refused(['recover'], 'OP_SYMLINK');
    // Without a HEAD there is no ledger to append to (exit 2); nothing reads through the link.
    refused(['append', 'handoff', '--agent', 'claude', '--op', 'o', '--exec', 'e', '--outcome', 'success'], 'INPUT_NOT_FOUND', 2);
    expect(existsSync(join(ledger, 'quarantine'))).toBe(false);
  });

  it('records.jsonl a link to the key, HEAD kept: recover refuses (OP_SYMLINK); the key is not copied or cut', () => {
    rmSync(join(ledger, 'records.jsonl'));
    symlinkSync(key, join(ledger, 'records.jsonl'));
    expect(refused(['recover'], 'OP_SYMLINK')).toMatch(/records\.jsonl is a symbolic link/);
    refused(['append', 'handoff', '--agent', 'claude', '--op', 'o', '--exec', 'e', '--outcome', 'success'], 'OP_SYMLINK');
    expect(existsSync(join(ledger, 'quarantine'))).toBe(false);
  });

  it('blobs/sha256 a link to a root-only folder: a checkpoint with --tests refuses before it writes a blob there', () => {
    mkdirSync(join(ledger, 'blobs'), { recursive: true });
    symlinkSync(outside.dir, join(ledger, 'blobs', 'sha256'));
    refused(['checkpoint', 'fix-tz', ...CP, '--tests', 'agent-chosen bytes'], 'OP_SYMLINK');
  });

  it('blobs/tmp a link to a root-only folder: a checkpoint with --tests-cmd refuses before it runs anything', () => {
    mkdirSync(join(ledger, 'blobs'), { recursive: true });
    symlinkSync(outside.dir, join(ledger, 'blobs', 'tmp'));
    refused(['checkpoint', 'fix-tz', ...CP, '--tests-cmd', 'echo agent-chosen bytes'], 'OP_SYMLINK');
  });

  it('quarantine a link to a root-only folder: an append over unpublished bytes refuses before it moves them there', () => {
    symlinkSync(outside.dir, join(ledger, 'quarantine'));
    appendFileSync(join(ledger, 'records.jsonl'), '{"agent-chosen":"bytes"}\n');
    refused(['append', 'handoff', '--agent', 'claude', '--op', 'o', '--exec', 'e', '--outcome', 'success'], 'OP_SYMLINK');
    refused(['recover'], 'OP_SYMLINK');
  });
});

describe.skipIf(!isRoot)(`a .ledger/ the agent can write (${isRoot ? 'root and nobody' : SKIP})`, () => {
  it('is refused before anything is read (StrictModes, OP_INSECURE_PATH), with the path and the fix, whatever the agent planted', () => {
    giveToAgent(ledger);
    // The agent, as itself, plants the links of findings 1 and 2 in what is now its folder.
    const plant = asAgent('/bin/sh', ['-c', `rm -f HEAD records.jsonl && ln -s ${key} records.jsonl && mkdir -p blobs && ln -s ${outside.dir} blobs/sha256 && ln -s ${outside.dir} quarantine`], ledger);
    expect(plant.status, plant.stderr).toBe(0);
    const line = refused(['recover'], 'OP_INSECURE_PATH');
    expect(line).toContain(`${ledger} belongs to uid ${AGENT}`);
    expect(line).toContain('chown 0');
    refused(['checkpoint', 'fix-tz', ...CP, '--tests', 'agent-chosen bytes'], 'OP_INSECURE_PATH');
  });

  it('a folder below it that the agent can write is refused too (group or other write, or another owner)', () => {
    mkdirSync(join(ledger, 'blobs'), { recursive: true });
    chmodSync(join(ledger, 'blobs'), 0o777);
    expect(refused(['checkpoint', 'fix-tz', ...CP, '--tests', 'bytes'], 'OP_INSECURE_PATH')).toMatch(/blobs is writable by anyone \(mode 0777\).*chmod go-w/);
    chmodSync(join(ledger, 'blobs'), 0o755);
    giveToAgent(join(ledger, 'blobs'));
    refused(['checkpoint', 'fix-tz', ...CP, '--tests', 'bytes'], 'OP_INSECURE_PATH');
  });

  it('records.jsonl with a second name (a hard link) is not written through', () => {
    const other = join(project.dir, 'other-name');
    // The ledger's own file under another name in the agent's folder: an append must not write it.
    appendFileSync(join(ledger, 'records.jsonl'), '');
    const { linkSync } = process.getBuiltinModule('node:fs');
    linkSync(join(ledger, 'records.jsonl'), other);
    expect(refused(['append', 'handoff', '--agent', 'claude', '--op', 'o', '--exec', 'e', '--outcome', 'success'], 'OP_INSECURE_PATH')).toMatch(/has 2 names/);
  });
});
