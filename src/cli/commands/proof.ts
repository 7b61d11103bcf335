// `ledger prove RECORD` and `ledger verify-proof FILE` (SPEC 13, issue 27): one record's C2SP
// tlog-proof, and its offline check. Declarations only (see ../verbs.ts): the implementation
// (proof-run.ts) loads when one of them runs.
//
// Policy: `prove` is plumbing (its output is a file format other machines' code reads, stable as
// C2SP defines it); `verify-proof` is porcelain, a verdict people and CI read, as `audit`'s is.
import { one } from '../flags.js';
import { verb } from '../verbs.js';
import { TRUST } from './common.js';

const impl = () => import('./proof-run.js');

export const PROOF_VERBS = [
  verb('verify-proof <file>', 'Check a record\'s tlog-proof offline: the record, the checkpoint\'s signature, the inclusion proof and the policy\'s witness quorum', {
    ok: 'the record is in the ledger the checkpoint signs, cosigned as the policy requires',
    schema: 'the record in the proof is not a well-formed record line, or the checkpoint is not a ledger\'s',
    linkage: 'the inclusion proof does not place the record under the checkpoint\'s root',
    signature: 'the checkpoint is not signed by a trusted key, a known signature fails, or the record\'s signature fails',
    keyPin: 'the record\'s key is not pinned for its seq and agent',
    freshness: 'the policy\'s quorum of witnesses did not cosign the checkpoint (within --max-age)',
  }, {
    plane: 'porcelain',
    flags: () => ({
      ...TRUST(),
      policy: one('<file>', 'A C2SP tlog-policy file: the witnesses and their quorum (required; `quorum none` accepts no cosignatures)'),
      maxAge: one('<dur>', 'Count only cosignatures made within this long (90s, 45m, 24h, 7d)'),
    }),
    examples: ['ledger verify-proof r.proof --trust keys/trust.json --policy witnesses.policy --max-age 24h'],
    run: async (io, [file], f) => (await impl()).runVerifyProof(io, file ?? '', f),
  }),
  verb('prove <record>', 'Write a record\'s C2SP tlog-proof (its inclusion in the checkpoint beside HEAD, with that checkpoint\'s cosignatures) to stdout', {
    ok: 'the proof was written',
  }, {
    plane: 'plumbing',
    flags: () => ({}),
    examples: ['ledger prove 42 > r.proof', 'ledger prove sha256:88e5c1a0 > r.proof'],
    run: async (io, [ref], f) => (await impl()).runProve(io, ref ?? '', f),
  }),
];
