// node:crypto, loaded where it is first used and never at import: loading it (it loads Node's
// streams) and its first digest cost about 20M instructions, a quarter of `node -e ''`, which a
// read verb whose HEAD this user verified before (store/head-memo.ts) need not pay. Every use of
// node:crypto in src/ goes through here (the signing worker's source, another thread, requires it
// itself), so sha256Hex (canonical.ts) can tell whether it is loaded already.
let loaded = false;

export function nodeCrypto(): typeof import('node:crypto') {
  loaded = true;
  return process.getBuiltinModule('node:crypto');
}

/** Whether this process has loaded node:crypto through nodeCrypto(). */
export const nodeCryptoLoaded = (): boolean => loaded;
