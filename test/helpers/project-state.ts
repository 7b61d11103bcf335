// Everything a refused workflow command must leave as it was: records.jsonl and HEAD (byte for
// byte), the two views, and every file under the ledger directory (blobs and their scratch
// folder included), by name and content.
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { snapshot } from './cli.js';

function tree(dir: string, out: Record<string, string> = {}, prefix = ''): Record<string, string> {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isDirectory()) tree(p, out, `${prefix}${name}/`);
    else if (name !== 'lock') out[`${prefix}${name}`] = st.isFile() ? readFileSync(p).toString('base64') : `(${st.mode.toString(8)})`;
  }
  return out;
}

export function projectState(root: string, ledgerDir = join(root, '.ledger')): unknown {
  const view = (name: string) => (existsSync(join(root, name)) ? readFileSync(join(root, name), 'utf8') : null);
  return { ...snapshot(ledgerDir), md: view('HANDOFF.md'), yml: view('HANDOFF.yml'), files: tree(ledgerDir) };
}

/** Every byte under `dir` as one buffer (to look for a secret anywhere in it). */
export function allBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) parts.push(readFileSync(p));
    }
  };
  if (existsSync(dir)) walk(dir);
  return Buffer.concat(parts);
}
