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
