// Pinning a key in the harness's trust file from `ledger init`.
import { existsSync } from 'node:fs';
import { readTrust, writeTrust } from '../../keys/trust-file.js';
import { trustEntry } from '../../keys/trust.js';

/**
 * Returns whether `publicKey` is pinned afterwards. Policy: `init` creates a trust file, or adds
 * a key it has just generated to an existing one; it never pins a key that already existed,
 * since deciding to trust an existing key is the harness's call, not the writer's.
 */
export function pinKeyInTrustFile(path: string, name: string, publicKey: string, keyWasCreated: boolean): boolean {
  if (!existsSync(path)) {
    if (!keyWasCreated) return false;
    writeTrust(path, { v: 1, keys: [trustEntry(name, publicKey)] });
    return true;
  }
  const trust = readTrust(path);
  if (trust.keys.some((k) => k.key === publicKey)) return true;
  if (!keyWasCreated) return false;
  const uniqueName = trust.keys.some((k) => k.name === name) ? `${name}-${publicKey.slice(0, 8)}` : name;
  writeTrust(path, { v: 1, keys: [...trust.keys, trustEntry(uniqueName, publicKey)] });
  return true;
}
