// When this machine last learned the remote's state (SPEC 11, "reads are current"): after a
// fetch it verified, or a publication of its own (the push's lease proved what the ref was).
// Kept beside the anchor in the per-user state directory (state.ts `fetched.json`); what a read
// says about how old its answer is comes from here.
import { readStateJson, writeStateJson, type RemotePaths } from './state.js';

export interface Fetched { v: 1; at: string; commit: string | null }

/** The last time the remote's state was learned, or null (never, or a file this machine did not write). */
export function readFetched(p: RemotePaths): Fetched | null {
  try {
    const v = readStateJson(p.fetched) as Partial<Fetched> | null;
    if (!v || v.v !== 1 || typeof v.at !== 'string' || !Number.isFinite(Date.parse(v.at)) || (v.commit !== null && typeof v.commit !== 'string')) return null;
    return v as Fetched;
  } catch {
    return null;
  }
}

/**
 * Records that the remote's state was learned now. Policy: best effort: it only dates answers,
 * so a state directory that refuses the write costs an older date (an answer that says it is
 * older than it is), never the read or the write that learned it.
 */
export function noteFetched(p: RemotePaths, now: Date, commit: string | null): void {
  try {
    writeStateJson(p.fetched, { v: 1, at: now.toISOString(), commit } satisfies Fetched);
  } catch {
    /* dated older, never wrong the other way */
  }
}
