// A witness's configuration file, `witness.conf` in its state folder: its own name (the key name
// of its cosignatures) and the logs it witnesses, one verifier key each. Pure: no I/O.
//
//   # comments and blank lines are ignored
//   name witness.example/w1
//   log handoff-ledger/<64 hex>+<key id>+<base64 key>
//
// Policy: a log is named by its vkey's key name, which is its checkpoint origin (tlog-policy
// "Defining a log"); one origin may list several keys (a log whose HEAD key was rotated).
import { LedgerError } from '../errors.js';
import { quote } from '../tlog/hash.js';
import { SIG_ED25519, formatVkey, isKeyName, parseVkey, type Vkey } from '../tlog/note.js';

export interface WitnessConfig {
  name: string;
  logs: Vkey[];
}

export function parseWitnessConfig(text: string, where = 'witness.conf'): WitnessConfig {
  let name: string | null = null;
  const logs: Vkey[] = [];
  text.split('\n').forEach((raw, i) => {
    const bad = (why: string) => new LedgerError('INPUT_SCHEMA', `${where}:${i + 1}: ${why}`, { line: i + 1 });
    const f = raw.trim().split(/[ \t]+/).filter((x) => x !== '');
    if (f.length === 0 || f[0].startsWith('#')) return;
    if (f[0] === 'name' && f.length === 2) {
      if (name !== null) throw bad('a second name line');
      if (!isKeyName(f[1])) throw bad(`bad witness name ${quote(f[1])}`);
      name = f[1];
    } else if (f[0] === 'log' && f.length === 2) {
      try {
        logs.push(parseVkey(f[1], [SIG_ED25519]));
      } catch (e) {
        throw bad((e as Error).message);
      }
    } else {
      throw bad(`expected "name <name>" or "log <vkey>", got ${quote(raw)}`);
    }
  });
  if (name === null) throw new LedgerError('INPUT_SCHEMA', `${where}: no name line`);
  return { name, logs };
}

export function formatWitnessConfig(c: WitnessConfig): string {
  return ['# handoff-ledger witness (ledger witness serve): its name and the logs it witnesses', `name ${c.name}`, ...c.logs.map((l) => `log ${formatVkey(l)}`), ''].join('\n');
}
