// `npm run demo`: the migration story of the causal-handoff essay, told by running the real
// `ledger` binary (dist/cli/ledger.cjs) as child processes in a fresh temporary directory with a
// fresh key. Each step says why, shows the command, prints its real output (trimmed where long)
// and checks the exit code it expects; a surprise stops the demo with exit 1 and says which step.
// Colour only on a terminal with NO_COLOR unset; plain when piped.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../cli/ledger.cjs', import.meta.url));
const PROJECT = resolve(dirname(BIN), '..', '..');

const colour = process.stdout.isTTY === true && !process.env.NO_COLOR;
const paint = (code: string) => (s: string) => (colour ? `\x1b[${code}m${s}\x1b[0m` : s);
const bold = paint('1');
const dim = paint('2');
const green = paint('32');
const red = paint('31');
const yellow = paint('33');

class Surprise extends Error {}

const out = (s = '') => process.stdout.write(s + '\n');

/** Quotes one word for a POSIX shell, only when it needs it, so what is printed can be pasted. */
function shq(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The environment for the children: no LEDGER_* from the caller (the demo names everything it
 *  uses), and this node first on PATH so `--tests-cmd "node ..."` runs the same node. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('LEDGER_')) env[k] = v;
  env.PATH = [dirname(process.execPath), process.env.PATH ?? ''].filter(Boolean).join(delimiter);
  return env;
}

let work = '';
let stepNo = 0;
let stepTitle = '';

function heading(title: string, ...why: string[]): void {
  stepNo += 1;
  stepTitle = title;
  out();
  out(bold(`${stepNo}. ${title}`));
  for (const line of why) out(line);
}

function note(text: string): void {
  out(dim(`# ${text}`));
}

/** Shows a shell command that the demo performs itself (the same effect, done in-process). */
function shell(command: string, effect: () => void): void {
  out(dim(`$ ${command}`));
  effect();
}

function colourLine(line: string): string {
  if (!colour) return line;
  const term = /^(\s+)(ok|FAIL)(\s.*)$/.exec(line);
  if (term) return term[1] + (term[2] === 'ok' ? green(term[2]) : red(term[2])) + term[3];
  if (/^(proceed|pass):/.test(line)) return green(line);
  if (/^hold:/.test(line) || /\bfails at seq\b/.test(line)) return red(line);
  if (/^warning:/.test(line)) return yellow(line);
  return line;
}

/** Prints text, keeping at most `max` lines. */
function printTrimmed(text: string, max: number): void {
  const lines = text.replace(/\n$/, '').split('\n');
  if (text.trim() === '') return;
  for (const line of lines.slice(0, max)) out(colourLine(line));
  if (lines.length > max) out(dim(`  ... (${lines.length - max} more lines)`));
}

interface Expect {
  /** The exit code this step must end with. */
  code?: number;
  /** Text the output must contain (stdout and stderr together). */
  includes?: string[];
  /** Text the output must not contain. */
  excludes?: string[];
  /** Print at most this many lines of output. */
  max?: number;
}

const codeMeaning: Record<number, string> = {
  0: 'ok', 2: 'usage', 3: 'operational', 10: 'audit: schema', 11: 'audit: linkage', 12: 'audit: signature',
  13: 'audit: key-pin', 14: 'audit: freshness', 20: 'hold',
};

/** Runs `ledger ...args` in the demo directory, prints command and output, checks the exit code. */
function ledger(args: string[], expect: Expect = {}): string {
  const want = expect.code ?? 0;
  out(dim(`$ ledger ${args.map(shq).join(' ')}`));
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: work, encoding: 'utf8', env: childEnv(), timeout: 60_000 });
  const text = (r.stdout ?? '') + (r.stderr ?? '');
  printTrimmed(text, expect.max ?? 40);
  const code = r.status;
  const problems: string[] = [];
  if (r.error) problems.push(`could not run it: ${r.error.message}`);
  if (code !== want) problems.push(`expected exit ${want} (${codeMeaning[want] ?? '?'}), got ${code ?? `signal ${r.signal}`}`);
  for (const s of expect.includes ?? []) if (!text.includes(s)) problems.push(`expected the output to mention ${JSON.stringify(s)}`);
  for (const s of expect.excludes ?? []) if (text.includes(s)) problems.push(`did not expect the output to mention ${JSON.stringify(s)}`);
  if (problems.length > 0) throw new Surprise(`step ${stepNo} (${stepTitle}), \`ledger ${args.map(shq).join(' ')}\`: ${problems.join('; ')}`);
  const mark = want === 0 ? green(`exit 0`) : want === 20 ? red(`exit 20: hold`) : red(`exit ${want}: ${codeMeaning[want] ?? ''}`);
  out(dim('-> ') + mark + dim(', as expected'));
  return r.stdout.trim();
}

function check(cond: boolean, what: string): void {
  if (!cond) throw new Surprise(`step ${stepNo} (${stepTitle}): ${what}`);
}

const SCHEMA = 'CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL);';
const SESSION_B = 'ALTER TABLE users DROP COLUMN email;';
const INDEX = 'CREATE INDEX users_email ON users (email);';
const TORN = '{"agent":"migrator","depends_on":[],"evidence":{"schema":{"digest":"sha256:5e';
const CHECK_SCRIPT = `// A real check, run by the ledger in checkpoint and finish: does the schema say what we need?
import { readFileSync } from 'node:fs';
const sql = readFileSync('db/schema.sql', 'utf8');
const checks = [
  ['users table exists', /CREATE TABLE users /],
  ['users.email is NOT NULL', /email TEXT NOT NULL/],
  ['users.email is indexed', /CREATE INDEX \\w+ ON users \\(email\\)/],
];
let passed = 0;
for (const [name, re] of checks) {
  const ok = re.test(sql);
  if (ok) passed += 1;
  console.log((ok ? 'ok   ' : 'FAIL ') + name);
}
console.log(\`\${passed} passed, \${checks.length - passed} failed\`);
process.exit(passed === checks.length ? 0 : 1);
`;

function story(): void {
  if (!existsSync(BIN)) {
    throw new Surprise(`the ledger binary is missing at ${BIN}: run \`npm run build\` first`);
  }
  work = mkdtempSync(join(tmpdir(), 'ledger-demo-'));
  const schemaPath = join(work, 'db', 'schema.sql');

  out(bold('handoff-ledger demo: the migration story of the causal-handoff essay'));
  out(`A fresh temporary directory and a fresh key: ${work}`);
  out(`Every \`$ ledger ...\` below is the real binary (${BIN}) run there; its output is real.`);

  heading('A ledger and a key',
    'A ledger is an append-only file of signed, hash-chained records and one signed HEAD pointer.',
    '`init` writes the genesis record; no key exists yet, so it makes one (mode 0600) and pins its public key in keys/trust.json, which the auditor trusts instead of anything the ledger says.');
  ledger(['init', '--name', 'migrations'], { includes: ['genesis sha256:', 'trust.json'] });

  heading('execution_001 of migrate_schema_17 times out',
    'The scheduler runs the migration; the attempt times out. The record keeps the logical operation (the intent) apart from this one execution, so a retry will not look like a second migration.');
  ledger(['append', 'handoff', '--agent', 'migrator', '--op', 'migrate_schema_17', '--exec', 'execution_001',
    '--outcome', 'timeout', '--note', 'lock wait timeout after 300s; to be re-driven']);

  heading('execution_002 succeeds, and binds what it produced',
    'The re-drive gets a new execution id under the same operation. It binds the schema file it wrote as evidence (digested now) and the test result as an invariant.');
  shell(`mkdir db && echo ${shq(SCHEMA)} > db/schema.sql`, () => {
    mkdirSync(join(work, 'db'));
    writeFileSync(schemaPath, SCHEMA + '\n');
  });
  const handoffId = ledger(['append', 'handoff', '--agent', 'migrator', '--op', 'migrate_schema_17', '--exec', 'execution_002',
    '--outcome', 'success', '--evidence', 'schema=db/schema.sql', '--invariant', 'tests=ok:14 passed, 0 failed'],
  { includes: ['sha256:'] });
  check(/^sha256:[0-9a-f]{64}$/.test(handoffId), `append should print the new record's id, printed ${JSON.stringify(handoffId)}`);

  heading("The deploy step's gate passes",
    'deploy_api_18 may act only if all five terms hold: the handoff is valid, its outcome accepted, its invariants satisfied, its state current, its dependencies true. The gate checks each one now, not when the message was sent.');
  ledger(['gate', 'migrate_schema_17', '--require-invariant', 'tests'], { includes: ['proceed:'] });

  heading('Another session changes the schema',
    'A second session, busy with something else, edits db/schema.sql. The handoff is still genuine; the state it describes is not there any more.');
  shell(`echo ${shq(SESSION_B)} >> db/schema.sql`, () => appendFileSync(schemaPath, SESSION_B + '\n'));

  heading('The gate holds, and says why',
    'The gate recomputes the evidence digest, finds that it no longer matches, and holds (exit 20) instead of letting the deploy run on a schema nobody verified.');
  ledger(['gate', 'migrate_schema_17', '--require-invariant', 'tests'],
    { code: 20, includes: ['hold:', 'state_current', 'has changed'] });

  heading('The schema is restored; the gate passes, and the deploy records that it acted',
    'With --consume-as, a passing gate also appends a consume record under the writer lock: a second delivery to deploy_api_18 would be held as a duplicate.');
  shell(`echo ${shq(SCHEMA)} > db/schema.sql`, () => writeFileSync(schemaPath, SCHEMA + '\n'));
  ledger(['gate', 'migrate_schema_17', '--require-invariant', 'tests', '--consume-as', 'deploy_api_18'],
    { includes: ['proceed:', 'consumed as deploy_api_18'] });

  heading('A revocation holds it again',
    'A reviewer finds that execution_002 ran against the staging replica. Revoking is one more signed record appended (nothing is rewritten), and every gate on that handoff holds from then on.');
  ledger(['revoke', handoffId, '--agent', 'reviewer', '--reason', 'migration ran against the staging replica, not production']);
  ledger(['gate', 'migrate_schema_17', '--require-invariant', 'tests'], { code: 20, includes: ['hold:', 'handoff_valid', 'revoked'] });

  heading('One flipped byte, and the audit names the layer and the record',
    'The auditor re-derives every id, link and signature and checks each key against keys/trust.json. The ledger audits clean; then, on a copy (the real ledger stays untouched), record 2\'s "14 passed" becomes "15 passed": one byte, one bit.');
  ledger(['audit'], { includes: ['pass:'] });
  const records = readFileSync(join(work, '.ledger', 'records.jsonl'));
  const marker = '"detail":"14 passed';
  const at = records.indexOf(marker);
  check(at >= 0 && records.indexOf(marker, at + 1) < 0, 'records.jsonl should hold "14 passed" exactly once (in record 2)');
  const offset = at + '"detail":"1'.length;
  shell('cp -R .ledger tampered', () => cpSync(join(work, '.ledger'), join(work, 'tampered'), { recursive: true }));
  shell(`printf 5 | dd of=tampered/records.jsonl bs=1 seek=${offset} conv=notrunc 2>/dev/null`, () => {
    const copy = readFileSync(join(work, 'tampered', 'records.jsonl'));
    copy[offset] = '5'.charCodeAt(0);
    writeFileSync(join(work, 'tampered', 'records.jsonl'), copy);
  });
  ledger(['audit', '--dir', 'tampered'], { code: 11, includes: ['linkage', 'seq 3'] });
  note("the edit changed record 2's content address, so record 3's prev_tail_hash no longer matches;");
  note('linkage is checked before signatures, so the first failure is linkage at seq 3 (exit 11).');

  heading('A torn write is quarantined',
    "A writer that dies mid-append leaves bytes past HEAD's size. They were never published, so they are not part of the ledger: the audit warns and still passes, and `recover` moves them into quarantine/ (it never touches published records).");
  shell(`printf '%s' ${shq(TORN)} >> .ledger/records.jsonl`, () => appendFileSync(join(work, '.ledger', 'records.jsonl'), TORN));
  ledger(['audit'], { includes: ['warning:', 'unpublished', 'pass:'] });
  ledger(['recover'], { includes: ['quarantine'] });
  shell('ls .ledger/quarantine', () => {
    const files = readdirSync(join(work, '.ledger', 'quarantine'));
    check(files.length === 1, `quarantine/ should hold one file, holds ${files.length}`);
    out(files.join('\n'));
  });
  ledger(['audit'], { includes: ['pass:'], excludes: ['warning:'] });

  heading('The handoff log: one work item, start to finish',
    'The same ledger carries the session-to-session workflow: one owner per work item, checkpoints that separate verified from attempted, a test command the ledger runs itself, and a bounded read for whoever comes next.');
  shell('cat > check-schema.mjs   # a small, real check of db/schema.sql (3 checks)', () => writeFileSync(join(work, 'check-schema.mjs'), CHECK_SCRIPT));
  ledger(['start', 'add-email-index', '--agent', 'claude', '--summary', 'index users.email for the login query'],
    { includes: ['started add-email-index'] });
  shell(`echo ${shq(INDEX)} >> db/schema.sql`, () => appendFileSync(schemaPath, INDEX + '\n'));
  ledger(['checkpoint', 'add-email-index', '--agent', 'claude', '--done', 'wrote the index into db/schema.sql',
    '--state', 'schema checks pass; not applied to any database yet', '--next', 'apply it on staging and EXPLAIN the login query',
    '--verified', 'schema checks (3 passed)', '--attempted', 'EXPLAIN on the login query',
    '--tests-cmd', 'node check-schema.mjs', '--evidence', 'schema=db/schema.sql'],
  { includes: ['exited 0'] });
  note('whoever picks the item up next reads this, not the whole history:');
  ledger(['resume', 'add-email-index'], { includes: ['3 passed, 0 failed', 'next:'], max: 30 });
  ledger(['finish', 'add-email-index', '--agent', 'claude', '--done', 'index written and checked',
    '--state', '3 schema checks pass', '--next', 'deploy_api_18 gates on add-email-index before it ships',
    '--verified', 'schema checks (3 passed)', '--tests-cmd', 'node check-schema.mjs', '--evidence', 'schema=db/schema.sql', '--invariant', 'tests=ok:3 passed, 0 failed'],
  { includes: ['is closed'] });
  note('a finish is a handoff like any other, so the deploy can gate on it:');
  ledger(['gate', 'add-email-index', '--require-invariant', 'tests'], { includes: ['proceed:'] });

  heading('The two views',
    '`start`, `checkpoint` and `finish` rewrite HANDOFF.md (for people) and HANDOFF.yml (for tools) beside the ledger, from the signed records.');
  for (const [file, max] of [['HANDOFF.md', 28], ['HANDOFF.yml', 60]] as const) {
    shell(`cat ${file}`, () => {
      const p = join(work, file);
      check(existsSync(p), `${file} should exist`);
      const text = readFileSync(p, 'utf8');
      check(text.includes('add-email-index'), `${file} should mention add-email-index`);
      printTrimmed(text, max);
    });
  }

  const alias = `alias ledger=${shq(`node ${shq(BIN)}`)}`;
  out();
  out(bold('Try it yourself'));
  out(`The demo's files are kept in ${work} (remove the folder when you are done).`);
  out('In a POSIX shell (bash, zsh):');
  out();
  for (const line of [
    `cd ${shq(work)}`,
    alias,
    'ledger log',
    'ledger show 2',
    'ledger audit --dir tampered; echo "exit $?"',
    'ledger gate migrate_schema_17 --require-invariant tests; echo "exit $?"',
    `ledger append handoff --agent you --op migrate_schema_17 --exec execution_003 --outcome success --evidence schema=db/schema.sql --invariant tests=ok --supersedes ${handoffId}`,
    'ledger gate migrate_schema_17 --require-invariant tests --json',
    'ledger resume add-email-index',
    'ledger --help',
  ]) out(`  ${line}`);
  out();
  out(`From the project directory (${PROJECT}), \`npx ledger --help\` runs the same binary.`);
}

try {
  story();
} catch (e) {
  const msg = e instanceof Error ? e.message : String(e);
  process.stderr.write(`\n${red('demo: stopped')}: ${e instanceof Surprise ? '' : 'unexpected error: '}${msg}\n`);
  if (work) process.stderr.write(`demo: the directory is kept for a look: ${work}\n`);
  process.exitCode = 1;
}
