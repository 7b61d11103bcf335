// Layer 3, signature (SPEC 8): strict Ed25519 under each record's and HEAD's own sig.key.
import { describe, expect, it } from 'vitest';
import { canonicalLine, headDigest, recordId, toBase64url } from '../../src/canonical.js';
import { makeSig } from '../../src/sign.js';
import { buildLedger, editLine, headForLines, parseLine, resignHead, serializeLedger, signerFor, withSig } from '../helpers/gen-ledger.js';
import { audit, verdict, lineEditor } from './harness.js';

const led = buildLedger({ count: 8 });
const harness = signerFor('harness');
const files = serializeLedger(led);
const withLines = lineEditor(led);
const sigOf = (line: string) => parseLine(line).sig as { key: string; value: string };
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

describe('signature: records', () => {
  it("fails a record carrying another record's signature", () => {
    const r = audit(withLines((l) => void (l[4] = withSig(l[4], { value: sigOf(l[5]).value }))));
    expect(verdict(r)).toEqual({ layer: 'signature', seq: 4, code: 'SIG_RECORD' });
  });

  it('fails a record signed by one key that names another in sig.key', () => {
    const r = audit(withLines((l) => void (l[2] = withSig(editLine(l[2], (x) => x, signerFor('intruder')), { key: harness.publicKey }))));
    expect(verdict(r)).toEqual({ layer: 'signature', seq: 2, code: 'SIG_RECORD' });
  });

  it('fails a malleated signature (S + L), which plain RFC 8032 libraries may accept', () => {
    const r = audit(withLines((l) => {
      const sig = Buffer.from(sigOf(l[3]).value, 'base64url');
      let s = 0n;
      for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i]);
      s += L;
      for (let i = 32; i < 64; i++, s >>= 8n) sig[i] = Number(s & 0xffn);
      l[3] = withSig(l[3], { value: toBase64url(sig) });
    }));
    expect(verdict(r)).toEqual({ layer: 'signature', seq: 3, code: 'SIG_RECORD' });
  });

  it('fails a HEAD signature presented as a record signature (domain separation)', () => {
    const r = audit(withLines((l) => {
      const x = parseLine(l[6]);
      l[6] = canonicalLine({ ...x, sig: makeSig('head', recordId(x), harness) });
    }));
    expect(verdict(r)).toEqual({ layer: 'signature', seq: 6, code: 'SIG_RECORD' });
  });

  it('verifies with the record key even when that key is unpinned (pinning is the next layer)', () => {
    const unpinned = buildLedger({ count: 6, signerFor: (seq) => (seq === 2 ? signerFor('intruder') : null) });
    expect(verdict(audit(unpinned))).toEqual({ layer: 'key-pin', seq: 2, code: 'PIN_UNPINNED' });
  });
});

describe('signature: HEAD', () => {
  it('fails a HEAD whose signature is for other bytes, with seq null', () => {
    const h = parseLine(led.headLine);
    const other = resignHead({ ...h, ts: '2026-11-29T12:30:00.000Z' }, harness).head;
    const r = audit({ ...files, head: Buffer.from(canonicalLine({ ...h, sig: other.sig })) });
    expect(verdict(r)).toEqual({ layer: 'signature', seq: null, code: 'SIG_HEAD' });
  });

  it('fails a record signature presented as HEAD signature', () => {
    const h = parseLine(led.headLine);
    const r = audit({ ...files, head: Buffer.from(canonicalLine({ ...h, sig: makeSig('record', headDigest(h), harness) })) });
    expect(verdict(r)).toEqual({ layer: 'signature', seq: null, code: 'SIG_HEAD' });
  });
});

