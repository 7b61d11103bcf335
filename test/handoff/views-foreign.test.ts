// Two ledgers, one folder of views (issue 13 finding 17): a view names the genesis it was rendered
// from, and a writer of another ledger refuses to overwrite it (INPUT_CONFLICT, exit 2, one line,
// nothing changed: both ledgers and both views byte for byte) unless it is told to adopt them
// (`--adopt-views`) or is pointed elsewhere (`--views DIR`).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runLedger, scratch, snapshot, type Run } from '../helpers/cli.js';
import { Ledger } from '../../src/ledger.js';
import { LedgerError } from '../../src/errors.js';
import { renderViews, viewGenesis, writeViews } from '../../src/handoff/views.js';
import { foldWorkLog } from '../../src/handoff/workitems.js';

let s: { dir: string; cleanup: () => void };
beforeEach(() => {
  s = scratch('ledger-views-');
});
afterEach(() => s.cleanup());

const run = (...args: string[]): Promise<Run> => runLedger(args, { cwd: s.dir, env: { LEDGER_AGENT: 'claude' } });
async function ok(...args: string[]): Promise<Record<string, unknown>> {
  const r = await run(...args, '--json');
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
}
const genesisOf = (ledgerDir: string): string => JSON.parse(readFileSync(join(ledgerDir, 'HEAD'), 'utf8')).genesis;

/** Every byte that a refusal must leave alone: both ledgers and the views folder. */
function everything(ledgers: string[], views: string): Record<string, unknown> {
  const view = (name: string) => (existsSync(join(views, name)) ? readFileSync(join(views, name), 'utf8') : null);
  return { ledgers: ledgers.map((l) => snapshot(l)), md: view('HANDOFF.md'), yml: view('HANDOFF.yml') };
}

async function refused(ledgers: string[], views: string, args: string[]): Promise<string> {
  const before = everything(ledgers, views);
  const r = await run(...args, '--json');
  expect(r.code, r.stderr).toBe(2);
  expect(JSON.parse(r.stdout).error.code).toBe('INPUT_CONFLICT');
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(everything(ledgers, views)).toEqual(before);
  return r.stderr;
}

describe('when two ledgers (--dir a/.ledger, --dir b/.ledger) share --views same/', () => {
  let a: string, b: string, views: string;
  beforeEach(async () => {
    a = join(s.dir, 'a/.ledger');
    b = join(s.dir, 'b/.ledger');
    views = join(s.dir, 'same');
    mkdirSync(views);
    await ok('init', '--dir', a, '--name', 'a');
    await ok('init', '--dir', b, '--name', 'b');
    await ok('start', 'item-a', '--dir', a, '--views', views, '--summary', 'a owns these views');
  });

  it('the views name the genesis they were rendered from, in the header of both files', () => {
    for (const name of ['HANDOFF.md', 'HANDOFF.yml']) expect(viewGenesis(readFileSync(join(views, name), 'utf8')), name).toBe(genesisOf(a));
  });

  it('every writing verb of the other ledger is refused before it appends, naming both genesis ids', async () => {
    await ok('start', 'item-b', '--dir', b, '--summary', 'b, its own views');
    const marker = join(s.dir, 'tests-ran');
    const cases = [
      ['start', 'item-c', '--dir', b, '--views', views, '--summary', 's'],
      // A refused checkpoint or finish never runs its test command (issue 13 finding 16).
      ['checkpoint', 'item-b', '--dir', b, '--views', views, '--done', 'd', '--state', 's', '--next', 'n', '--tests-cmd', `touch ${marker}`],
      ['finish', 'item-b', '--dir', b, '--views', views, '--done', 'd', '--state', 's', '--next', 'n', '--tests-cmd', `touch ${marker}`],
      ['release', 'item-b', '--dir', b, '--views', views],
      ['note', 'item-b', '--dir', b, '--views', views, '--text', 't'],
      ['render', '--dir', b, '--views', views],
    ];
    for (const args of cases) {
      const why = await refused([a, b], views, args);
      expect(why, args[0]).toContain(`${join(views, 'HANDOFF.md')} was rendered from another ledger (genesis ${genesisOf(a).slice(0, 19)}…), not from ${b} (genesis ${genesisOf(b).slice(0, 19)}…)`);
      expect(why).toContain('--adopt-views');
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('render --check says foreign (exit 30); --adopt-views rewrites them, and then the first ledger is refused', async () => {
    const check = await run('render', '--check', '--dir', b, '--views', views, '--json');
    expect(check.code).toBe(30);
    expect(JSON.parse(check.stdout).views.map((v: { status: string }) => v.status)).toEqual(['foreign', 'foreign']);
    expect((await run('render', '--check', '--adopt-views', '--dir', b, '--views', views)).code).toBe(2);

    const adopted = await ok('start', 'item-b', '--dir', b, '--views', views, '--summary', 's', '--adopt-views');
    expect(adopted.warnings).toEqual([]);
    expect(viewGenesis(readFileSync(join(views, 'HANDOFF.md'), 'utf8'))).toBe(genesisOf(b));
    expect(readFileSync(join(views, 'HANDOFF.yml'), 'utf8')).toBe(renderViews(foldWorkLog(Ledger.open({ dir: b }).records()))['HANDOFF.yml']);
    await refused([a, b], views, ['note', 'item-a', '--dir', a, '--views', views, '--text', 't']);
    expect((await run('render', '--dir', a, '--views', views, '--adopt-views')).code).toBe(0);
    expect(viewGenesis(readFileSync(join(views, 'HANDOFF.md'), 'utf8'))).toBe(genesisOf(a));
  });

  it('the library refuses too (Ledger.start with views), and writeViews refuses under its lock', async () => {
    const before = everything([a, b], views);
    const ledger = Ledger.open({ dir: b, key: join(s.dir, 'b/keys/harness.key') });
    await expect(ledger.start({ slug: 'lib', agent: 'claude', summary: 's', views })).rejects.toMatchObject({ code: 'INPUT_CONFLICT' });
    let err: unknown;
    try {
      writeViews(b, views, 1000);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe('INPUT_CONFLICT');
    expect((err as LedgerError).data).toMatchObject({ view_genesis: genesisOf(a), genesis: genesisOf(b) });
    expect(everything([a, b], views)).toEqual(before);
  });
});

describe('when a second ledger, .ledger2, sits beside .ledger in one folder', () => {
  it('its verbs refuse the folder\'s views, and write their own with --views elsewhere', async () => {
    const one = join(s.dir, '.ledger');
    const two = join(s.dir, '.ledger2');
    await ok('init', '--name', 'one');
    await ok('init', '--dir', '.ledger2', '--name', 'two');
    await ok('start', 'fix-tz', '--summary', 'the first ledger');
    const why = await refused([one, two], s.dir, ['start', 'fix-tz', '--dir', '.ledger2', '--summary', 'the second ledger']);
    expect(why).toContain(`not from ${two}`);
    mkdirSync(join(s.dir, 'views2'));
    await ok('start', 'fix-tz', '--dir', '.ledger2', '--views', 'views2', '--summary', 'the second ledger');
    expect(viewGenesis(readFileSync(join(s.dir, 'views2/HANDOFF.md'), 'utf8'))).toBe(genesisOf(two));
    expect(viewGenesis(readFileSync(join(s.dir, 'HANDOFF.md'), 'utf8'))).toBe(genesisOf(one));
  });
});

describe('what counts as the view\'s genesis', () => {
  it('only the header: record text that spells a genesis line further down claims nothing', async () => {
    await ok('init', '--name', 'one');
    const fake = 'sha256:' + 'f'.repeat(64);
    await ok('start', 'x', '--summary', `\n<!-- ledger-view genesis ${fake} -->\n# ledger-view genesis ${fake}`);
    await ok('note', 'x', '--agent', 'r', '--text', `<!-- ledger-view genesis ${fake} -->\n# ledger-view genesis ${fake}\n`);
    for (const name of ['HANDOFF.md', 'HANDOFF.yml']) expect(viewGenesis(readFileSync(join(s.dir, name), 'utf8')), name).toBe(genesisOf(join(s.dir, '.ledger')));
    expect(viewGenesis(`<!-- ledger-view genesis ${fake} -->\n`)).toBe(fake);
    expect(viewGenesis(`my notes\n<!-- ledger-view genesis ${fake} -->\n`)).toBeNull();
  });

  it('a view that names no genesis (an older version\'s, a person\'s file) is not another ledger\'s: it is handled as before', async () => {
    await ok('init', '--name', 'one');
    writeFileSync(join(s.dir, 'HANDOFF.md'), 'my own notes\n');
    const r = await ok('start', 'x', '--summary', 's');
    expect(String(r.warnings)).toContain('had been edited by hand; its text is kept in');
    expect(viewGenesis(readFileSync(join(s.dir, 'HANDOFF.md'), 'utf8'))).toBe(genesisOf(join(s.dir, '.ledger')));
  });
});
