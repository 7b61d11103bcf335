// Speed, paying for issue 14's targets (`start` and `checkpoint` <= 1.5x `node -e ''` on a
// 200,000-record ledger): the pieces of HANDOFF.yml that a write leaves as they were, kept for
// this user's next render. Measured on the bench's ledger (20 open items), cold, as every command
// runs the renderer once: HANDOFF.yml cost 6 ms of a 40 ms `checkpoint`, most of it the yaml
// library writing the `active` items, of which a write changes one; 2.2 ms with this, besides
// the 1 ms of loading the library (real time, timestamps at each step's entry and exit).
// (HANDOFF.md's log entries were tried too, keyed by record id: 0.4 ms saved, 2 ms spent reading
// and writing a fragment file as large as the log.)
//
// A fragment is text the renderer made from a value, under a key holding that whole value: the
// JSON of an `active` item's data, which is JSON data alone (strings, integers, null, arrays,
// objects: JSON.stringify names each such value once). The renderer stays pure: it takes a
// `Fragments` and uses a fragment only where its key is the value it would render;
// test/handoff/view-fragments.test.ts holds that a render with any fragments given is the render
// without them, byte for byte.
//
// Policy: the fragments live in the per-user state directory (store/state-dir.ts: the user's
// own, never `.ledger/` or the views folder, which anyone may have written), named for the
// ledger directory and genesis, and are believed only under the renderer identity they were
// made by (RENDER_FORMAT and the yaml library's version: another version could write the same
// value differently, and `ledger render --check` compares with a fresh render). They are written
// without fsync: a lost, torn or foreign file is no file, and the next render makes them afresh.
// Only the fragments a render used are kept, so the file holds at most ACTIVE_LIMIT of them.
import { ledgerStateName } from '../store/state-dir.js';
import type { LedgerCache } from '../cache/ledger-cache.js';

/** What a renderer asks of its fragments: the text made earlier for `key`, or undefined. */
export interface Fragments {
  get(key: string): string | undefined;
  set(key: string, text: string): void;
}

/** The fragment text for `key`: kept, or made now (and kept). Without fragments, made. */
export function fragment(fragments: Fragments | undefined, key: string, make: () => string): string {
  if (fragments === undefined) return make();
  const had = fragments.get(key);
  if (had !== undefined) return had;
  const made = make();
  fragments.set(key, made);
  return made;
}

/**
 * Bump when the renderer's output for the same value changes (render-yml.ts, text/sanitize.ts):
 * fragments made by another format are never used.
 */
export const RENDER_FORMAT = 1;

/** Fragments read from one file and written back with only the ones a render used. */
export class KeptFragments implements Fragments {
  private readonly used = new Map<string, string>();
  private added = false;
  constructor(private readonly had: ReadonlyMap<string, string>) {}

  get(key: string): string | undefined {
    const t = this.had.get(key);
    if (t !== undefined) this.used.set(key, t);
    return t;
  }

  set(key: string, text: string): void {
    this.used.set(key, text);
    this.added = true;
  }

  /** Whether the file should be written: a fragment was made, or one it held went unused. */
  changed(): boolean {
    return this.added || this.used.size !== this.had.size;
  }

  entries(): [string, string][] {
    return [...this.used];
  }
}

const fileOf = (cache: LedgerCache, realDir: string, genesis: string) => cache.userFile('fragments', 'views', `${ledgerStateName(realDir, genesis)}.json`);

/** This user's fragments for the ledger at `realDir` with `genesis`, made by renderer `identity`; none when there are none to believe (or no caches). */
export function readFragments(cache: LedgerCache | undefined, realDir: string, genesis: string, identity: string): KeptFragments {
  const none = new KeptFragments(new Map());
  if (!cache?.on('fragments')) return none;
  const v = fileOf(cache, realDir, genesis).get() as { v?: unknown; dir?: unknown; genesis?: unknown; identity?: unknown; fragments?: unknown } | null;
  if (v === null || typeof v !== 'object' || v.v !== 1 || v.dir !== realDir || v.genesis !== genesis || v.identity !== identity || !Array.isArray(v.fragments)) return none;
  const had = new Map<string, string>();
  for (const e of v.fragments as unknown[]) {
    if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== 'string' || typeof e[1] !== 'string') return none;
    had.set(e[0], e[1]);
  }
  return new KeptFragments(had);
}

/** Writes back the fragments a render used (Policy, header: best effort, unsynced). */
export function keepFragments(cache: LedgerCache | undefined, realDir: string, genesis: string, identity: string, kept: KeptFragments): void {
  if (!cache?.on('fragments') || !kept.changed()) return;
  fileOf(cache, realDir, genesis).set({ v: 1, dir: realDir, genesis, identity, fragments: kept.entries() });
}
