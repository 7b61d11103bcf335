import { it, expect } from 'vitest';
import { rmSync, readdirSync, existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { world } from '../remote/kit.js';

it('f6 variants', async () => {
  const w = world(['a', 'b']);
  const [a, b] = w.machines;
  let r = await a.run(['init', '--remote', w.url, '--name', 'x']);
  expect(r.code, r.stderr).toBe(0);
  const head0 = readFileSync(join(a.ledger, 'HEAD'));
  r = await a.run(['start', 'item', '--agent', 'a', '--summary', 's']);
  expect(r.code, r.stderr).toBe(0);
  const good = readFileSync(join(a.ledger, 'HEAD'));
  const recs = readFileSync(join(a.ledger, 'records.jsonl'));
  const show = async (label: string) => {
    const r = await a.run(['sync']);
    const q = existsSync(join(a.ledger, 'quarantine')) ? readdirSync(join(a.ledger, 'quarantine')) : [];
    console.log(label, r.code, r.stdout.trim(), r.stderr.trim(), 'quarantine:', q, 'records same', readFileSync(join(a.ledger, 'records.jsonl')).equals(recs));
    rmSync(join(a.ledger, 'quarantine'), { recursive: true, force: true });
    rmSync(join(a.ledger, 'HEAD'), { recursive: true, force: true });
    writeFileSync(join(a.ledger, 'HEAD'), good);
    writeFileSync(join(a.ledger, 'records.jsonl'), recs);
  };
  writeFileSync(join(a.ledger, 'HEAD'), head0); await show('older HEAD');
  writeFileSync(join(a.ledger, 'HEAD'), ''); await show('empty HEAD');
  writeFileSync(join(a.ledger, 'HEAD'), 'junk\n'); await show('junk HEAD');
  rmSync(join(a.ledger, 'HEAD')); mkdirSync(join(a.ledger, 'HEAD')); await show('dir HEAD');
  rmSync(join(a.ledger, 'HEAD')); await show('missing HEAD');
  // b joins, writes; then a with missing HEAD
  r = await b.run(['init', '--remote', w.url]); expect(r.code, r.stderr).toBe(0);
  r = await b.run(['note', 'item', '--agent', 'b', '--text', 'hi']); expect(r.code, r.stderr).toBe(0);
  rmSync(join(a.ledger, 'HEAD')); await show('missing HEAD, remote ahead');
  writeFileSync(join(a.ledger, 'HEAD'), head0); await show('older HEAD, remote ahead');
  w.cleanup();
}, 120000);
