// The reading requests: status, resume and log (SPEC 10, 12). The CLI builds them from flags, the
// MCP server from tool arguments, a library caller by hand; each is checked once, here.
import { LedgerError } from '../errors.js';
import { KINDS, type Kind } from '../record.js';
import { checked } from './checked.js';
import { checkAgent, checkSlug } from './fields.js';

/** `ledger status`: what is open; `agent`'s own items first. */
export interface StatusRequest {
  /** Who is asking (null or unset: nobody in particular). */
  agent?: string | null;
  /** The one reference time of leases (default: the ledger's clock, read once). */
  now?: Date;
}

export interface StatusChecked { agent: string | null; now?: Date }

export function checkStatus(req: StatusRequest): StatusChecked {
  const agent = req.agent === undefined || req.agent === null ? null : checkAgent(req.agent);
  return checked({ agent, ...(req.now !== undefined ? { now: req.now } : {}) });
}

/**
 * `ledger resume [SLUG]`: one work item, for whoever takes it up; without a slug, the asker's own
 * open item when there is exactly one, else the status (SPEC 10).
 */
export interface ResumeRequest extends StatusRequest {
  slug?: string;
}

export interface ResumeChecked extends StatusChecked { slug: string | null }

export function checkResume(req: ResumeRequest): ResumeChecked {
  const slug = req.slug === undefined ? null : checkSlug(req.slug);
  const { agent, now } = checkStatus(req);
  return checked({ slug, agent, ...(now !== undefined ? { now } : {}) });
}

/** `ledger log`: records matching the filter, newest first. */
export interface LogRequest {
  /** Only records of this logical operation. */
  op?: string;
  /** Only records of this kind. */
  kind?: Kind;
  /** At most this many (default 20). */
  limit?: number;
}

export function checkLog(req: LogRequest): Readonly<LogRequest> {
  if (req.kind !== undefined && !(KINDS as readonly string[]).includes(req.kind)) throw new LedgerError('USAGE', `--kind must be one of ${KINDS.join(', ')}, got "${String(req.kind)}"`);
  if (req.limit !== undefined && !Number.isSafeInteger(req.limit)) throw new LedgerError('USAGE', `--limit expects a whole number, got ${String(req.limit)}`);
  if (req.op !== undefined && typeof req.op !== 'string') throw new LedgerError('USAGE', `--op expects an operation id, got ${typeof req.op}`);
  return checked({ ...(req.op !== undefined ? { op: req.op } : {}), ...(req.kind !== undefined ? { kind: req.kind } : {}), ...(req.limit !== undefined ? { limit: req.limit } : {}) });
}
