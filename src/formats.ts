// `handoff-ledger/formats`: the primitives under the Ledger, for a caller that builds or checks
// bytes itself (an independent verifier, a tool that writes a trust file, a test). A ledger
// written with these alone is not held to the writer's rules: write through `Ledger`.

// Canonical JSON (RFC 8785) and digests: a record's id, HEAD's digest (SPEC 2, 4, 5).
export { canonicalJson, canonicalLine, recordId, headDigest, digestOf, parseJsonStrict } from './canonical.js';

// Signing and strict verification (SPEC 4): the signed message, a signer from a seed, and the
// slow independent reference verifier that the vectors check the fast one against.
export { createSigner, makeSig, signingMessage, verifySig, type Signer, type Sig, type SigDomain } from './sign.js';
export { verifyReference } from './ed25519-reference.js';

// Trust and key files (SPEC 7), parsed and checked without I/O.
export { parseTrust, formatTrust, pinProblem, trustEntry, type Trust, type TrustKey } from './keys/trust.js';
export { authorizeCommand, machineName } from './keys/grants.js';
export { parseSecretKeyFile, formatSecretKeyFile, KEY_NAME_RE, type SecretKeyFile } from './keys/secret-key.js';

// Evidence digests (SPEC 6) and whether a digest is still current.
export { redigestSource, dirDigest, checkEvidence, type EvidenceCheck } from './causal/evidence.js';

// The kinds and their strict schemas (SPEC 4, 6): problems listed, never thrown.
export { KINDS, OUTCOMES, recordProblems, draftProblems, headProblems } from './record.js';

// The one seam to the disk (tests inject faults through `Ledger.open({ ops })`).
export { realFileOps, type FileOps } from './fs/ops.js';

// Transparency-log formats (SPEC 13, C2SP): the tree, notes and verifier keys, checkpoints,
// cosignatures, tlog-proof, tlog-policy, and a record's proof checked offline.
export { leafHash, nodeHash, EMPTY_ROOT } from './tlog/hash.js';
export { storedHashIndex, storedHashCount, storedHashesForLeaf, treeHash, proveInclusion, proveConsistency, arrayReader, RightEdge, type HashReader } from './tlog/tree.js';
export { verifyInclusion, verifyConsistency } from './tlog/verify.js';
export { parseNote, formatNote, signNote, openNote, parseVkey, formatVkey, keyIdOf, ed25519NoteSigner, ed25519NoteVerifier, SIG_ED25519, SIG_COSIGNATURE_V1, type Note, type Vkey } from './tlog/note.js';
export { parseCheckpoint, formatCheckpoint, ledgerOrigin, type Checkpoint } from './tlog/checkpoint.js';
export { createCosigner, cosignatureVerifier, cosignatureTime } from './tlog/cosignature.js';
export { parseProof, formatProof, MAX_PROOF_BYTES, type TlogProof } from './tlog/proof.js';
export { parsePolicy, quorumMet, type Policy } from './tlog/policy.js';
export { verifyRecordProof, type ProofVerdict, type ProofLayer } from './tlog/record-proof.js';
