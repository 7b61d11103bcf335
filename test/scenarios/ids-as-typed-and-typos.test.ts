// Issue 14.8 and 14.9, in a real git repository, as a user types at a shell: the ids that `log`
// prints (shortened) are taken back as typed by show, revoke, --supersedes and gate --handoff, and
// so are seq numbers and HEAD; a misspelt verb or flag gets "did you mean" and changes nothing;
// `ledger help VERB` ends with the verb's exit codes.
import { afterEach, describe, expect, it } from 'vitest';
import { scenario, type Scenario } from './kit.js';

let sc: Scenario;
afterEach(() => sc?.cleanup());

const OP = 'migrate_schema_17';
const FILES = { 'db/schema.sql': 'create table accounts (id bigint primary key);\n' };
const handoff = (exec: string, ...more: string[]) =>
  sc.ok(['append', 'handoff', '--op', OP, '--exec', exec, '--outcome', 'success', '--agent', 'migrator', '--evidence', 'schema=file:db/schema.sql', ...more]);

describe('when a user copies the short ids that `ledger log` printed', () => {
  it('show, revoke, --supersedes and gate --handoff take them, and seq numbers and HEAD too', () => {
    sc = scenario('billing', FILES);
    const first = handoff('execution_001');
    const log = sc.ledger(['log', '--limit', '3']);
    expect(log.code).toBe(0);
    const short = log.stdout.match(/ (sha256:[0-9a-f]{8,63})$/m)![1];
    expect(first.id.startsWith(short)).toBe(true);
    expect(short.length).toBeLessThan(first.id.length);

    expect(sc.ok(['show', short]).id).toBe(first.id);
    // The bare hex too, unless it is all digits (about 1 in 280 twelve-hex prefixes): that is a
    // seq, and the refusal says to write the sha256: form (the record's id is random each run).
    const bare = short.slice('sha256:'.length);
    if (/^[0-9]+$/.test(bare)) {
      const r = sc.ledger(['show', bare]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`write sha256:${bare}`);
    } else expect(sc.ok(['show', bare]).id).toBe(first.id);
    expect(sc.ok(['show', String(first.seq)]).id).toBe(first.id);
    expect(sc.ok(['show', 'HEAD']).id).toBe(first.id);

    const second = handoff('execution_002', '--supersedes', short);
    expect(sc.ok(['show', String(second.seq)]).record.supersedes).toEqual([first.id]);
    expect(sc.ledger(['gate', OP, '--handoff', second.id.slice(0, 20)]).code).toBe(0);
    expect(sc.ledger(['gate', OP, '--handoff', short]).code).toBe(20); // superseded state

    sc.ok(['revoke', String(second.seq), '--reason', 'ran against staging', '--agent', 'migrator']);
    expect(sc.ok(['show', 'HEAD']).record).toMatchObject({ kind: 'revoke', target: second.id });
  });

  it('refuses a prefix too short, one that matches nothing, and a seq past HEAD: exit 2, nothing changed', () => {
    sc = scenario('billing', FILES);
    const h = handoff('execution_001');
    sc.refused(['revoke', h.id.slice(0, 'sha256:'.length + 6), '--reason', 'r', '--agent', 'migrator'], 2, 'USAGE');
    sc.refused(['revoke', 'sha256:00000000', '--reason', 'r', '--agent', 'migrator'], 2, 'INPUT_NOT_FOUND');
    sc.refused(['revoke', '99', '--reason', 'r', '--agent', 'migrator'], 2, 'INPUT_NOT_FOUND');
  });
});

describe('when a user misspells a verb or a flag', () => {
  it('says "did you mean", exits 2 and writes nothing', () => {
    sc = scenario('billing', FILES);
    sc.ok(['start', 'fix-timezone', '--agent', 'claude', '--summary', 'fix toLocal()']);
    const verb = sc.refused(['chekpoint', 'fix-timezone', '--agent', 'claude'], 2, 'USAGE');
    expect(verb.stderr).toContain('did you mean `ledger checkpoint`?');
    const flag = sc.refused(['checkpoint', 'fix-timezone', '--agent', 'claude', '--done', 'd', '--state', 's', '--nxt', 'n'], 2, 'USAGE');
    expect(flag.stderr).toContain('did you mean `--next`?');
  });

  it('`ledger help gate` says what it does first and ends with its exit codes, 0 and 20 among them', () => {
    sc = scenario('billing', FILES);
    const r = sc.ledger(['help', 'gate']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(r.stdout).toMatch(/May a consumer act on this operation now\?/);
    const codes = lines.slice(lines.findIndex((l) => l === 'Exit codes:') + 1).map((l) => l.trim().split(/\s+/)[0]);
    expect(codes).toEqual(expect.arrayContaining(['0', '2', '20']));
    expect(lines.at(-1)).toMatch(/^\s+\d+\s/);
    expect(sc.ledger(['gate', '--help']).stdout).toBe(r.stdout);
  });
});
