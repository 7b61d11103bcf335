// C2SP tlog-policy (c2sp.org/tlog-policy): the logs and witnesses a consumer trusts and the
// quorum of cosignatures it requires. Pure: no I/O. Consumer-kept, like the trust file (SPEC 13),
// but parsed as attacker-controlled all the same: it may come from a repository.
import { LedgerError } from '../errors.js';
import { quote } from './hash.js';
import { SIG_COSIGNATURE_V1, SIG_ED25519, parseVkey, type Vkey } from './note.js';

export interface PolicyWitness { name: string; vkey: Vkey; url: string | null }
export interface PolicyGroup { name: string; k: number; members: string[] }

export interface Policy {
  logs: { vkey: Vkey; url: string | null }[];
  witnesses: PolicyWitness[];
  groups: PolicyGroup[];
  /** The name the quorum line gives: a witness, a group, or "none". */
  quorum: string;
}

// Policy: the limits tlog-policy recommends supporting, as maximums: 32 logs, witnesses, groups.
const LIMIT = 32;
// Only tab and newline among the control characters (tlog-policy "Character set").
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\x00-\x08\x0b-\x1f\x7f]/;

export function parsePolicy(text: string, where = 'policy'): Policy {
  const lines = text.split('\n');
  const bad = (n: number, why: string) => new LedgerError('INPUT_POLICY', `${where}:${n}: ${why}`, { line: n, why });
  if (text.length > 1 << 20) throw bad(0, 'more than 1 MiB');
  const p: Policy = { logs: [], witnesses: [], groups: [], quorum: '' };
  const names = new Set<string>(['none']);
  const keys = new Set<string>();
  let quorumLine = 0;
  lines.forEach((raw, i) => {
    const n = i + 1;
    if (CONTROL_RE.test(raw)) throw bad(n, 'a control character other than tab');
    const f = raw.split(/[ \t]+/).filter((x) => x !== '');
    if (f.length === 0 || f[0].startsWith('#')) return;
    const dup = (v: Vkey) => {
      const k = Buffer.from(v.publicKey).toString('hex');
      if (keys.has(k)) throw bad(n, 'the same public key twice');
      keys.add(k);
    };
    const vkey = (t: string, type: number) => {
      try {
        return parseVkey(t, [type]);
      } catch (e) {
        throw bad(n, (e as Error).message);
      }
    };
    switch (f[0]) {
      case 'log': {
        if (f.length < 2 || f.length > 3) throw bad(n, 'expected "log <vkey> [<url>]"');
        const v = vkey(f[1], SIG_ED25519);
        dup(v);
        p.logs.push({ vkey: v, url: f[2] ?? null });
        if (p.logs.length > LIMIT) throw bad(n, `more than ${LIMIT} logs`);
        return;
      }
      case 'witness': {
        if (f.length < 3 || f.length > 4) throw bad(n, 'expected "witness <name> <vkey> [<url>]"');
        if (names.has(f[1])) throw bad(n, `the name ${quote(f[1])} is defined already`);
        const v = vkey(f[2], SIG_COSIGNATURE_V1);
        dup(v);
        names.add(f[1]);
        p.witnesses.push({ name: f[1], vkey: v, url: f[3] ?? null });
        if (p.witnesses.length > LIMIT) throw bad(n, `more than ${LIMIT} witnesses`);
        return;
      }
      case 'group': {
        if (f.length < 4) throw bad(n, 'expected "group <name> all|any|<k> <name>..."');
        const [, name, kText, ...members] = f;
        if (names.has(name)) throw bad(n, `the name ${quote(name)} is defined already`);
        for (const m of members) {
          if (m === 'none' || !names.has(m)) throw bad(n, `${quote(m)} is not a witness or group defined above`);
        }
        if (new Set(members).size !== members.length) throw bad(n, 'a member is listed twice');
        const k = kText === 'all' ? members.length : kText === 'any' ? 1 : /^[1-9][0-9]{0,2}$/.test(kText) ? Number(kText) : NaN;
        if (!(k >= 1 && k <= members.length)) throw bad(n, `the threshold ${quote(kText)} is not all, any or 1 to ${members.length}`);
        names.add(name);
        p.groups.push({ name, k, members });
        if (p.groups.length > LIMIT) throw bad(n, `more than ${LIMIT} groups`);
        return;
      }
      case 'quorum': {
        if (f.length !== 2) throw bad(n, 'expected "quorum <name>"');
        if (quorumLine) throw bad(n, `a second quorum line (the first is line ${quorumLine})`);
        if (!names.has(f[1])) throw bad(n, `${quote(f[1])} is not a witness or group defined above`);
        quorumLine = n;
        p.quorum = f[1];
        return;
      }
      default:
        throw bad(n, `unknown line ${quote(f[0])}`);
    }
  });
  if (!quorumLine) throw bad(lines.length, 'no quorum line');
  return p;
}

/** Whether the witnesses named in `cosigned` (by policy name) satisfy the policy's quorum. */
export function quorumMet(p: Policy, cosigned: ReadonlySet<string>): boolean {
  if (p.quorum === 'none') return true;
  const memo = new Map<string, boolean>();
  const met = (name: string): boolean => {
    const m = memo.get(name);
    if (m !== undefined) return m;
    const g = p.groups.find((x) => x.name === name);
    const r = g ? g.members.filter(met).length >= g.k : cosigned.has(name);
    memo.set(name, r);
    return r;
  };
  return met(p.quorum);
}
