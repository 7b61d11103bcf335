// The no-follow opener (src/fs/confine.ts, issue 23 findings 1 and 2), as a property: whatever
// tree of folders, files, symbolic links and hard links sits below a strict root, and whatever
// an attacker who can write the root's parent (the caller's project folder) and the folders it
// owns below does between any two system calls of ours (swap the root for a link, plant a link
// or a hard link, rename a folder away), no write through the real FileOps and the durable
// recipe lands outside the root: every file outside is byte-identical, mode and all, and none is
// added or removed. Each operation either works or is refused; none follows a link.
//
// The attacker acts inside our operations: node:fs's lstatSync, openSync and fstatSync (which
// confine.ts and ops.ts call through the module) run one of its moves before the real call when
// the schedule says so (syncBuiltinESMExports makes the ES namespace see the wrapper).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { confineRoot } from '../../src/fs/confine.js';
import { createFileDurable, mkdirDurable, replaceFileDurable, appendFileUnsynced } from '../../src/fs/durable.js';
import { realFileOps } from '../../src/fs/ops.js';
import { scratch } from '../helpers/cli.js';

const cjsFs = createRequire(import.meta.url)('node:fs') as typeof fs;
const real = { lstatSync: cjsFs.lstatSync, openSync: cjsFs.openSync, fstatSync: cjsFs.fstatSync };
/** Run before each of those calls while set; not again from inside itself. */
let hook: (() => void) | null = null;
let inHook = false;
beforeAll(() => {
  for (const name of Object.keys(real) as (keyof typeof real)[]) {
    (cjsFs as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      if (hook && !inHook) {
        inHook = true;
        try {
          hook();
        } finally {
          inHook = false;
        }
      }
      return (real[name] as (...a: unknown[]) => unknown)(...args);
    };
  }
  syncBuiltinESMExports();
});
afterAll(() => {
  Object.assign(cjsFs, real);
  syncBuiltinESMExports();
});

const NAMES = ['a', 'b', 'c'] as const;
type Name = (typeof NAMES)[number];
/** One entry of the generated tree, at a path of names below the root. */
type Entry = { path: Name[]; kind: 'dir' | 'file' | 'link-out' | 'link-out-file' | 'link-in' | 'dangling' | 'hardlink-out' };
/** One operation of ours, on a path below the root. */
type Op = { op: 'replace' | 'create' | 'mkdir' | 'rplus' | 'w' | 'append' | 'unlink' | 'rename'; path: Name[]; to: Name[]; data: string };
/** One move of the attacker's. */
type Move = 'swap-root' | 'unswap-root' | 'plant-link' | 'plant-hardlink' | 'rename-away';

const namePath = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 });
const entry = fc.record({ path: namePath, kind: fc.constantFrom<Entry['kind']>('dir', 'dir', 'file', 'link-out', 'link-out-file', 'link-in', 'dangling', 'hardlink-out') });
const operation = fc.record({ op: fc.constantFrom<Op['op']>('replace', 'create', 'mkdir', 'rplus', 'w', 'append', 'unlink', 'rename'), path: namePath, to: namePath, data: fc.string({ maxLength: 8 }) });
const move = fc.constantFrom<Move>('swap-root', 'unswap-root', 'plant-link', 'plant-hardlink', 'rename-away');

/** Every file and folder under `dir`: name -> kind, mode and bytes (links by their target). */
function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, prefix: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = join(d, name);
      const st = real.lstatSync(p);
      if (st.isDirectory()) {
        out[`${prefix}${name}/`] = (st.mode & 0o7777).toString(8);
        walk(p, `${prefix}${name}/`);
      } else if (st.isSymbolicLink()) out[`${prefix}${name}`] = `-> ${fs.readlinkSync(p)}`;
      else out[`${prefix}${name}`] = `${(st.mode & 0o7777).toString(8)} ${fs.readFileSync(p).toString('hex')}`;
    }
  };
  walk(dir, '');
  return out;
}

describe('the no-follow opener, with an attacker inside every operation', () => {
  it('never writes, creates or removes anything outside the root', () => {
    const s = scratch('ledger-confine-');
    try {
      let run = 0;
      fc.assert(
        fc.property(fc.array(entry, { maxLength: 10 }), fc.array(fc.tuple(operation, fc.array(fc.tuple(fc.nat(6), move), { maxLength: 3 })), { minLength: 1, maxLength: 8 }), (tree, ops) => {
          const base = join(s.dir, `r${run++}`);
          const project = join(base, 'project'); // the caller's folder: the attacker writes it
          const root = join(project, 'ledger'); // a strict root, the key owner's
          const outside = join(base, 'outside'); // root-only: nothing may land here
          const attacker = join(project, 'agent'); // a folder the attacker owns (below the project)
          for (const d of [root, outside, attacker]) fs.mkdirSync(d, { recursive: true, mode: 0o755 });
          fs.writeFileSync(join(outside, 'secret'), 'the key\n', { mode: 0o600 });
          fs.mkdirSync(join(outside, 'sub'));
          // The generated tree, below the root (each entry where its parent is a folder).
          for (const e of tree) {
            const p = join(root, ...e.path);
            try {
              if (e.kind === 'dir') fs.mkdirSync(p, { recursive: true, mode: 0o755 });
              else if (e.kind === 'file') fs.writeFileSync(p, 'inside\n', { mode: 0o644 });
              else if (e.kind === 'link-out') fs.symlinkSync(join(outside, 'sub'), p);
              else if (e.kind === 'link-out-file') fs.symlinkSync(join(outside, 'secret'), p);
              else if (e.kind === 'link-in') fs.symlinkSync(root, p);
              else if (e.kind === 'dangling') fs.symlinkSync(join(outside, 'nothing-yet'), p);
              else fs.linkSync(join(outside, 'secret'), p);
            } catch {
              /* a parent that is not a folder, or a name taken: the tree is what it is */
            }
          }
          confineRoot(root, true);
          const before = snapshotTree(outside);
          const moves: Record<Move, () => void> = {
            // The project folder is the caller's: it may swap the root's entry for a link out.
            'swap-root': () => {
              if (fs.existsSync(`${root}.real`)) return;
              fs.renameSync(root, `${root}.real`);
              fs.symlinkSync(outside, root);
            },
            'unswap-root': () => {
              if (!fs.existsSync(`${root}.real`)) return;
              fs.unlinkSync(root);
              fs.renameSync(`${root}.real`, root);
            },
            // In the project: links and hard links to what it cannot reach (the moves resolve no
            // link themselves: the attacker cannot write outside, only name it).
            'plant-link': () => fs.symlinkSync(outside, join(project, `l${Math.random().toString(36).slice(2, 6)}`)),
            'plant-hardlink': () => fs.linkSync(join(outside, 'secret'), join(project, `h${Math.random().toString(36).slice(2, 6)}`)),
            'rename-away': () => {
              if (fs.existsSync(join(project, 'moved'))) return;
              fs.renameSync(attacker, join(project, 'moved'));
              fs.symlinkSync(outside, attacker);
            },
          };
          for (const [o, schedule] of ops) {
            // The attacker's moves, each just before one of our next system calls.
            const queue = [...schedule].sort((x, y) => x[0] - y[0]);
            let call = 0;
            hook = () => {
              while (queue.length && queue[0][0] <= call) {
                try {
                  moves[queue.shift()![1]]();
                } catch {
                  /* a move that does not apply now */
                }
              }
              call++;
            };
            const p = join(root, ...o.path);
            const dir = join(root, ...o.path.slice(0, -1));
            const name = o.path[o.path.length - 1];
            const data = Buffer.from(`ours ${o.data}\n`);
            try {
              if (o.op === 'replace') replaceFileDurable(realFileOps, dir, name, data);
              else if (o.op === 'create') createFileDurable(realFileOps, dir, name, data);
              else if (o.op === 'mkdir') mkdirDurable(realFileOps, p, 0o755);
              else if (o.op === 'append') appendFileUnsynced(realFileOps, p, data, 1 << 20);
              else if (o.op === 'unlink') realFileOps.unlink(p);
              else if (o.op === 'rename') realFileOps.rename(p, join(root, ...o.to));
              else {
                const fd = realFileOps.open(p, o.op === 'w' ? 'w' : 'r+', 0o644);
                try {
                  realFileOps.write(fd, data, 0);
                } finally {
                  realFileOps.close(fd);
                }
              }
            } catch (e) {
              // Refused (a coded error) or failed as the system says (an errno): both are fine.
              const err = e as { code?: unknown };
              if (typeof err.code !== 'string') throw e;
            } finally {
              hook = null;
            }
            // Put the root back for the next operation (the attacker may swap it again).
            try {
              moves['unswap-root']();
            } catch {
              /* nothing to put back */
            }
          }
          expect(snapshotTree(outside)).toEqual(before);
          // And nothing of ours anywhere but the root: not in the attacker's folders either.
          const ours = Object.entries(snapshotTree(base)).filter(([k, v]) => !k.startsWith('project/ledger') && (v.includes(Buffer.from('ours ').toString('hex')) || /\.tmp$/.test(k)));
          expect(ours).toEqual([]);
          fs.rmSync(base, { recursive: true, force: true });
        }),
        { numRuns: process.env.SOAK === '1' ? 2000 : 150 },
      );
    } finally {
      hook = null;
      s.cleanup();
    }
  });
});
