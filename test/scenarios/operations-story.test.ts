// Issue 26 item 6: HANDOFF.md tells the operations' story in a section of its own. The causal
// essay's migration told through the work log, in a real git project, between two CI batches
// (so the fold memo is written before the story and again after it): migrate_schema_17 times
// out, a CI job's handoff of it times out too, the re-drive succeeds with evidence; the deployer's
// gate consumes it (`--consume-as`); alice revokes it with a hostile reason. HANDOFF.md, parsed
// and rendered by markdown-it (HTML and autolinks on, as GitHub reads it), shows each outcome,
// the consumption and the revocation as prose (no code span on anything a person wrote, the
// hostile reason escaped as text); HANDOFF.yml says the latest outcome in a line; the fold memo locates the consume and revoke records; and the views the incremental
// writers left are byte-identical to a render with LEDGER_NO_CACHE=1.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import MarkdownIt from 'markdown-it';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { spawnLedgerSync } from '../helpers/cli.js';
import { MEMO_EVERY, MEMO_VERSION } from '../../src/handoff/fold-memo.js';
import { neutralise } from '../../src/text/sanitize.js';
import { scenario, type Scenario } from './kit.js';

const md = new MarkdownIt({ html: true, linkify: true });
const OP = 'migrate_schema_17';
const REASON = 'the evidence came from the wrong <script>alert(1)</script> branch: **not** [a](javascript:alert(1)) `code` @here #12 www.e.vil\n# not a heading\n- not an item\n> not a quote';

let sc: Scenario;
let seqs: { consume: number; revoke: number; handoff: number; finishes: number[] };
// Caches on, whatever the suite's project says (its no-cache run too): the test compares both itself.
const as = (agent: string, extra: Record<string, string> = {}) => ({ env: { LEDGER_AGENT: agent, LEDGER_NO_CACHE: '', ...extra } });

/** `count` CI records (an intent and its handoff per operation) in one batch, as a CI job appends them. */
function ciBatch(from: number, count: number): void {
  const lines: string[] = [];
  for (let k = from; lines.length < count; k++) {
    lines.push(JSON.stringify({ kind: 'intent', logical_operation_id: `ci-${k}`, execution_id: `run-${k}`, action: 'deploy build to staging' }));
    lines.push(JSON.stringify({ kind: 'handoff', logical_operation_id: `ci-${k}`, execution_id: `run-${k}`, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }));
  }
  const r = spawnLedgerSync(['append', '--batch'], { cwd: sc.root, env: { HOME: join(sc.base, 'home'), LEDGER_STATE_DIR: join(sc.base, 'state'), LEDGER_AGENT: 'ci', LEDGER_NO_CACHE: '' }, stdin: lines.join('\n') + '\n' });
  expect(r.code, r.stderr).toBe(0);
}

beforeAll(() => {
  sc = scenario('ops-story', { 'db/schema.sql': 'create table accounts (id bigint primary key);\n' });
  ciBatch(1, MEMO_EVERY + 40);
  sc.ok(['start', OP, '--summary', 'apply migration 17 to staging'], as('claude'));
  const timeout = sc.ok(['finish', OP, '--outcome', 'timeout', '--done', 'ran the migration; the lock wait timed out', '--state', 'unknown whether it applied', '--next', 'run it again'], as('claude'));
  const handoff = sc.ok(['append', 'handoff', '--op', OP, '--exec', 'ci-run-7', '--outcome', 'timeout', '--note', 'the CI job timed out as well: *no* lock'], as('ci'));
  sc.ok(['start', OP, '--summary', 'apply migration 17 again'], as('claude'));
  const success = sc.ok(['finish', OP, '--done', 'applied the migration', '--state', 'schema at version 17', '--next', 'deploy api 18', '--evidence', 'schema=db/schema.sql', '--invariant', 'migration=ok'], as('claude'));
  const gate = sc.ok(['gate', OP, '--consume-as', 'deploy_api_18'], as('deployer'));
  const revoke = sc.ok(['revoke', String(success.seq), '--reason', REASON], as('alice'));
  seqs = { consume: gate.consume.seq, revoke: revoke.seq, handoff: handoff.records?.[0]?.seq ?? handoff.seq, finishes: [timeout.seq, success.seq] };
  // More CI traffic, then a work-log verb: its fold starts from the memo and writes a new one
  // past the story, and it rewrites the views incrementally.
  ciBatch(10_000, MEMO_EVERY + 40);
  sc.ok(['note', OP, '--text', 'api 18 waits for a new migration'], as('alice'));
});
afterAll(() => sc.cleanup());

/** The tokens of HANDOFF.md's Operations section (from its heading to the next section's). */
function operationsSection(view: string) {
  const tokens = md.parse(view, {});
  const h2 = tokens.map((t, i) => (t.type === 'heading_open' && t.tag === 'h2' ? i : -1)).filter((i) => i >= 0);
  const start = h2.find((i) => tokens[i + 1].content === 'Operations');
  expect(start, 'an Operations section').toBeDefined();
  const end = h2.find((i) => i > start!) ?? tokens.length;
  expect(tokens[end + 1].content).toBe('Log, newest first');
  const flat = (ts: typeof tokens): typeof tokens => ts.flatMap((t) => [t, ...flat(t.children ?? [])]);
  return flat(tokens.slice(start, end));
}

describe('when a work item\'s outcome is consumed and then revoked', () => {
  it('HANDOFF.md tells the operation\'s story as prose: each outcome, the consumption, the revocation and its reason', () => {
    const section = operationsSection(sc.md());
    const text = section.filter((t) => t.type === 'text' || t.type === 'text_special').map((t) => t.content).join('');
    expect(section.filter((t) => t.type === 'heading_open' && t.tag === 'h3')).toHaveLength(1);
    expect(text).toContain(OP);
    // the story, oldest first: two timeouts (the finish and the CI job's handoff), then the success
    expect(text).toMatch(new RegExp(`timeout, finished by claude at .*seq ${seqs.finishes[0]}.*timeout, handed off by ci at .*seq ${seqs.handoff}.*success, finished by claude at .*seq ${seqs.finishes[1]}`, 's'));
    expect(text).toMatch(new RegExp(`Consumed by deploy_api_18 \\(deployer's gate\\) at \\S+, deciding on the ledger through seq ${seqs.finishes[1]} \\(seq ${seqs.consume}, sha256:[0-9a-f]{12}…\\)`));
    expect(text).toMatch(new RegExp(`REVOKED by alice at \\S+ \\(seq ${seqs.revoke}, sha256:[0-9a-f]{12}…\\): the evidence came from the wrong`));
    expect(text).toMatch(/Latest outcome: success \(finish by claude, seq \d+\), consumed by deploy_api_18; REVOKED by alice at \S+, so a gate on it holds/);
    // the hostile reason and the handoff's note, whole, as the characters typed
    const squash = (x: string) => x.replace(/\s+/g, '');
    expect(squash(text)).toContain(squash(neutralise(REASON)));
    expect(squash(text)).toContain(squash('the CI job timed out as well: *no* lock'));
    // nothing a person wrote is code, a link, HTML, emphasis, a heading, a list or a quote of its own
    const codes = section.filter((t) => t.type === 'code_inline').map((t) => t.content);
    expect(codes.filter((c) => !['--consume-as', 'ledger gate SLUG', 'ledger log --op SLUG'].includes(c))).toEqual([]);
    for (const t of section) expect(['link_open', 'html_inline', 'em_open', 'blockquote_open', 'code_block', 'fence']).not.toContain(t.type);
    const html = md.render(sc.md());
    expect(html).not.toMatch(/<script>|<a |<h1>not a heading|<blockquote|<li>not an item|<em>no<\/em>/);
    // the full ids a line away, in the operation's folded block
    const block = sc.md().slice(sc.md().indexOf('## Operations'), sc.md().indexOf('## Log, newest first'));
    for (const what of [`consume seq ${seqs.consume}: sha256:`, `revoke seq ${seqs.revoke}: sha256:`]) expect(block).toMatch(new RegExp(`  - ${what}[0-9a-f]{64}\n`));
  });

  it('HANDOFF.yml says it in a line: the latest outcome, who consumed it, and who revoked it, when and why', () => {
    const ops = sc.yml().operations as string[];
    // CI operations were never work items: not in the story
    expect(ops).toHaveLength(1);
    expect(ops[0]).toMatch(new RegExp(`^${OP}: success \\(finish by claude, seq ${seqs.finishes[1]}; 3 outcomes\\), consumed by deploy_api_18 at \\S+; REVOKED by alice at \\S+: the evidence came from the wrong <script>`));
    expect(ops[0]).not.toContain('\n');
  });

  it('the fold memo locates the story\'s records, and the views the incremental writers left are byte-identical to a render without caches', () => {
    const memo = JSON.parse(readFileSync(join(sc.ledgerDir, 'index', 'work-fold.json'), 'utf8')) as { v: number; seq: number; work: [number, number][] };
    expect(memo.v).toBe(MEMO_VERSION);
    const located = memo.work.map(([seq]) => seq);
    for (const seq of [seqs.consume, seqs.revoke, seqs.handoff, ...seqs.finishes]) expect(located).toContain(seq);
    expect(memo.seq).toBeGreaterThan(seqs.revoke + MEMO_EVERY);
    const written = { md: sc.md(), yml: sc.read('HANDOFF.yml') };
    // The same ledger rendered with no cache at all, into another folder.
    const other = join(sc.base, 'views-no-cache');
    mkdirSync(other);
    sc.ok(['render', '--views', other], as('alice', { LEDGER_NO_CACHE: '1' }));
    expect(readFileSync(join(other, 'HANDOFF.md'), 'utf8')).toBe(written.md);
    expect(readFileSync(join(other, 'HANDOFF.yml'), 'utf8')).toBe(written.yml);
    // And checked both ways: both current.
    for (const noCache of ['', '1']) expect(sc.ok(['render', '--check'], as('alice', { LEDGER_NO_CACHE: noCache })).ok).toBe(true);
    // A later reader's fold from the memo (a fresh state directory: no kept fold) renders the same.
    sc.ok(['render', '--views', other], as('alice', { LEDGER_STATE_DIR: join(sc.base, 'state-2') }));
    expect(readFileSync(join(other, 'HANDOFF.md'), 'utf8')).toBe(written.md);
  });
});
