// The public library API of handoff-ledger.
export { Ledger, type OpenOptions, type LogFilter } from './ledger.js';
export { LedgerError, exitCodeFor, type ErrorCode } from './errors.js';
export { canonicalJson, canonicalLine, recordId, headDigest, digestOf } from './canonical.js';
export { createSigner, makeSig, signingMessage, verifySig, type Signer, type Sig, type SigDomain } from './sign.js';
export { verifyReference } from './ed25519-reference.js';
export { parseTrust, pinProblem, trustEntry, type Trust, type TrustKey } from './keys/trust.js';
export { parseSecretKeyFile } from './keys/secret-key.js';
export { readSecretKey, writeSecretKey } from './keys/key-file.js';
export { readTrust } from './keys/trust-file.js';
export { digestSource, redigestSource, dirDigest, checkEvidence, type EvidenceContext, type EvidenceCheck } from './causal/evidence.js';
// The causal layer (issue 4): the gate, retries, consumption, pending executions.
export { runGate, runGateAndConsume, type GateRun, type GateRunOptions } from './causal/gate-run.js';
export { evaluateGate, formatGateText, TERMS, type GateOptions, type GateResult, type Term } from './causal/gate/index.js';
export { appendCausal, type CausalAppendResult } from './causal/retry.js';
export { findPending, type PendingEntry } from './causal/pending.js';
export type * from './record.js';
export { KINDS, OUTCOMES, recordProblems, draftProblems, headProblems } from './record.js';
export type { AppendResult, Appended, LockedView } from './store/append.js';
export type { RecordAt } from './store/read.js';
export type { RecoverReport } from './store/recover.js';
export type { FileOps } from './fs/ops.js';
export { auditLedger, formatReportText, type AuditReport, type AuditOptions } from '../audit/index.js';
export { auditLedgerParallel } from '../audit/parallel.js';
