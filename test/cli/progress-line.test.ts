// issue 14: a long operation shows progress on a terminal. The first fold of a big ledger
// reports as it reads; the CLI draws one line on stderr (redrawn in place, erased before the
// command's output) only when stderr is a terminal, never into a script's stderr.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { withProgressLine } from '../../src/cli/progress-line.js';
import type { CliIO } from '../../src/cli/commands/common.js';
import { readFolds } from '../../src/handoff/fold-memo.js';
import { readHead } from '../../src/store/head.js';
import { ledgerPaths } from '../../src/store/paths.js';
import { realFileOps } from '../../src/fs/ops.js';
import { PROGRESS_EVERY, reportProgress } from '../../src/progress.js';
import { buildLedger, serializeLedger, writeLedgerFiles } from '../helpers/gen-ledger.js';
import { scratch } from '../helpers/cli.js';

let s: { dir: string; cleanup: () => void };
beforeEach(() => (s = scratch('progress-')));
afterEach(() => s.cleanup());

const ioOf = (isTTY: boolean) => {
  const out = { stderr: '' };
  const io: CliIO = { stdout: () => {}, stderr: (t) => void (out.stderr += t), env: {}, cwd: s.dir, isTTY, readStdin: async () => '' };
  return { io, out };
};

describe('when the first command on a big ledger folds every record', () => {
  const count = 2 * PROGRESS_EVERY + 10;
  const fold = () => {
    const dir = join(s.dir, '.ledger');
    writeLedgerFiles(dir, serializeLedger(buildLedger({ count })));
    const paths = ledgerPaths(dir);
    return async () => readFolds(paths, readHead(realFileOps, paths)!, { write: false });
  };

  it('on a terminal, stderr shows how far it is, redrawn in place, and the line is erased at the end', async () => {
    const { io, out } = ioOf(true);
    await withProgressLine(io, fold(), { afterMs: 0, everyMs: 0 });
    expect(out.stderr).toBe(
      `\r\x1b[Kreading the work log: ${PROGRESS_EVERY} of ${count} records (${Math.floor((100 * PROGRESS_EVERY) / count)}%)` +
        `\r\x1b[Kreading the work log: ${2 * PROGRESS_EVERY} of ${count} records (${Math.floor((200 * PROGRESS_EVERY) / count)}%)` +
        '\r\x1b[K',
    );
  });

  it('without a terminal nothing is written, and after the command no sink is left behind', async () => {
    const { io, out } = ioOf(false);
    await withProgressLine(io, fold(), { afterMs: 0, everyMs: 0 });
    expect(out.stderr).toBe('');
    const tty = ioOf(true);
    await withProgressLine(tty.io, async () => undefined, { afterMs: 0, everyMs: 0 });
    reportProgress('after the command', 1, 2);
    expect(tty.out.stderr).toBe('');
  });

  it('a command that fails still erases its line', async () => {
    const { io, out } = ioOf(true);
    const failing = withProgressLine(io, async () => {
      reportProgress('indexing records.jsonl', 10, 100, 'bytes');
      throw new Error('refused');
    }, { afterMs: 0, everyMs: 0 });
    await expect(failing).rejects.toThrow('refused');
    expect(out.stderr).toBe('\r\x1b[Kindexing records.jsonl: 10 of 100 bytes (10%)\r\x1b[K');
  });
});

describe('issue 26: the line is erased before anything else is written, and the verbs that take seconds report', () => {
  it('output written while the line shows starts on a clean line (stdout or stderr), and the io is as it was after', async () => {
    const log: string[] = [];
    const io: CliIO = { stdout: (t) => void log.push(`out:${t}`), stderr: (t) => void log.push(`err:${t}`), env: {}, cwd: s.dir, isTTY: true, readStdin: async () => '' };
    const before = { stdout: io.stdout, stderr: io.stderr };
    await withProgressLine(io, async () => {
      reportProgress('signing records', 4096, 200000);
      io.stdout('appended 200000 records\n');
      reportProgress('auditing the chain', 10, 20);
      io.stderr('ledger: warning: something\n');
    }, { afterMs: 0, everyMs: 0 });
    expect(log).toEqual([
      'err:\r\x1b[Ksigning records: 4096 of 200000 records (2%)',
      'err:\r\x1b[K',
      'out:appended 200000 records\n',
      'err:\r\x1b[Kauditing the chain: 10 of 20 records (50%)',
      'err:\r\x1b[K',
      'err:ledger: warning: something\n',
    ]);
    expect({ stdout: io.stdout, stderr: io.stderr }).toEqual(before);
  });

  it('a batch reports while it signs', async () => {
    const { Ledger } = await import('../../src/ledger.js');
    const { signerFor } = await import('../helpers/gen-ledger.js');
    const seen = new Set<string>();
    const io: CliIO = { stdout: () => {}, stderr: (t) => void (t.includes(':') && seen.add(t.replace(/^\r\x1b\[K/, '').split(':')[0])), env: {}, cwd: s.dir, isTTY: true, readStdin: async () => '' };
    const dir = join(s.dir, 'l');
    const state = join(s.dir, 'state');
    Ledger.init({ dir, key: signerFor('harness'), agent: 'bench', stateDir: state });
    const ledger = Ledger.open({ dir, key: signerFor('harness'), stateDir: state });
    const drafts = Array.from({ length: PROGRESS_EVERY }, (_, i) => ({ kind: 'handoff', agent: 'bench', logical_operation_id: 'op', execution_id: `e${i}`, outcome: 'success', evidence: {}, invariants: {}, depends_on: [] }));
    await withProgressLine(io, async () => void ledger.append(drafts as never), { afterMs: 0, everyMs: 0 });
    expect(seen).toContain('signing records');
  });
});
