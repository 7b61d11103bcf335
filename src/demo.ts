// `npm run demo`: a narrated run of the real `ledger` binary in a temporary directory.
// (Issue 7 grows this into the full migration story; for now: init, a few appends, show.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('./bin.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'ledger-demo-'));
const colour = process.stdout.isTTY && !process.env.NO_COLOR;
const bold = (s: string) => (colour ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string) => (colour ? `\x1b[2m${s}\x1b[0m` : s);

function step(title: string, args: string[], expectCode = 0): string {
  console.log(`\n${bold('## ' + title)}`);
  console.log(dim(`$ ledger ${args.join(' ')}`));
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: work, encoding: 'utf8', env: { ...process.env, LEDGER_AGENT: 'demo-agent' } });
  process.stdout.write(r.stdout);
  process.stdout.write(r.stderr);
  if (r.status !== expectCode) {
    console.error(`demo: expected exit ${expectCode}, got ${r.status}`);
    process.exit(1);
  }
  return r.stdout.trim();
}

console.log(bold(`handoff-ledger demo in ${work}`));
step('Create a ledger (and a fresh key, pinned in keys/trust.json)', ['init', '--name', 'demo']);
step('Execution 001 of migrate_schema_17 times out', ['append', 'handoff', '--op', 'migrate_schema_17', '--exec', 'execution_001', '--outcome', 'timeout']);
writeFileSync(join(work, 'schema.sql'), 'CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL);\n');
const id = step('Execution 002 succeeds, binding the schema file and the test result', [
  'append', 'handoff', '--op', 'migrate_schema_17', '--exec', 'execution_002', '--outcome', 'success',
  '--evidence', 'schema=schema.sql', '--invariant', 'tests=ok:14 passed',
]);
step('Show that handoff', ['show', id]);
step('The log, newest first', ['log']);
step('A bad outcome is refused with exit 2, and nothing changes', ['append', 'handoff', '--op', 'x', '--exec', 'y', '--outcome', 'done'], 2);
step('HEAD: the one mutable pointer, signed', ['head']);
console.log(`\nNext: cd ${work} && npx ledger --help`);
