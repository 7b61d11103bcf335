// The public API of handoff-ledger: a curated list. Everything a caller needs to keep a ledger
// with the writer's rules is here; the primitives beneath it (canonical JSON, ids, signing
// messages, strict verification, trust and key parsing, evidence digests, schemas, the file
// seam) are in `handoff-ledger/formats` (src/formats.ts).

// Open and write a ledger. `Ledger` applies the rules the CLI applies: init writes the one
// genesis; append takes handoff, intent and revoke with retry identity; start/checkpoint/finish
// and release apply the work item's ownership and lease rules (note needs the item to exist); gate({ consumeAs }) is the only way to a
// consume record.
export {
  Ledger, type OpenOptions, type LogFilter, type AppendResult, type AppendedRecord, type GateCallOptions, type LedgerAuditOptions,
  type ResumeAnswer, type ViewsRequest,
} from './ledger.js';
// The request each verb takes (src/requests/), checked once before anything runs or is written;
// the messages name each field by its command-line flag.
export type { StartRequest, CheckpointRequest, FinishRequest, TestsRequest, ReleaseRequest, NoteRequest } from './requests/work.js';
export type { HandoffRequest, IntentRequest, GateRequest, RevokeRequest, ConsumeFailedRequest } from './requests/causal.js';
export type { StatusRequest, ResumeRequest, LogRequest } from './requests/read.js';
export type { WorkResult, WriteResult, ViewsRefresh } from './handoff/workflow.js';
export type { ReleaseResult } from './handoff/release.js';
// What status and resume report, and their text as `ledger` prints it.
export { formatStatus, STATUS_MAX_ROWS, takenFromLine, type StatusReport, type StatusItem } from './handoff/status.js';
// Issue 24: output formatters: how current a joined ledger's answer is, the one next step, quoted record text.
export { currencyLine, type Currency } from './remote/current.js';
export { resumeStep, takeoverStep, type Caller } from './handoff/next-step.js';
export { quoted } from './handoff/annotations.js';

export type { ResumeReport } from './handoff/resume.js';
export { digestSource, type EvidenceContext } from './causal/evidence.js';
// Which ledger a folder uses, found as git finds its repository (SPEC 3).
export { locateLedger, type LedgerLocation, type LocateOptions, type LedgerSource } from './project/locate.js';

// Across machines (SPEC 11): Ledger.join joins a ledger to a git remote; a joined Ledger
// publishes every write there (ledger.sync(), ledger.remote()).
export type { JoinResult, SyncReport, RemoteSummary } from './remote/sync.js';
// Whether a refusal is a fork or rollback of the remote, which holds every writer until a person decides.
export { holdKind } from './remote/hold.js';

// Keys and trust files: the secret key a writer signs with, the trust file a reader checks with.
export { readSecretKey, writeSecretKey } from './keys/key-file.js';
export { readTrust } from './keys/trust-file.js';

// Check: the independent audit (SPEC 8) and the gate (SPEC 9).
export { auditLedger } from './ledger.js';
export { formatReportText, type AuditReport, type AuditOptions } from '../audit/index.js';
export { formatGateText, TERMS, type GateResult, type Term } from './causal/gate/index.js';
export type { GateRun } from './causal/gate-run.js';
export type { PendingEntry, PendingReport, UnresolvedOutcome } from './causal/pending.js';
export { formatPendingText } from './causal/pending-text.js';

// Errors and exit codes: bad input throws a coded LedgerError; every exit code comes from EXIT.
export { LedgerError, EXIT, EXIT_MEANINGS, exitCodeFor, type ErrorCode, type ExitName } from './errors.js';

// Types of what the ledger holds and returns.
export type * from './record.js';
export type { Signer, Sig } from './sign.js';
export type { Trust, TrustKey } from './keys/trust.js';
export type { RecordAt } from './store/read.js';
export type { RecordRef } from './store/ids.js';
export type { RecoverReport } from './store/recover.js';

// Witnessed checkpoints (SPEC 13): a witness's folder and server, policy and proof files.
export { readPolicy, readProof, initWitness, serveWitnessDir } from './witness/files.js';
export { witnessRefusal } from './witness/refusal.js';
export type { WitnessRule } from './witness/remote-check.js';
export type { WitnessOutcome } from './witness/collect.js';
export type { WitnessedVerdict, WitnessCheck } from './witness/enforce.js';
