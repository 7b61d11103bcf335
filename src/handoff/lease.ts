// Leases: how long a work item's owner holds it without writing. Pure; `now` is always passed in
// (captured once per command), never read here.

/** SPEC 10: the default lease is 60 minutes, renewed by each checkpoint. */
export const DEFAULT_LEASE_MS = 60 * 60_000;

/** The end of a lease that starts at `now`, as a record time (SPEC 2). */
export function leaseUntil(now: Date, leaseMs: number): string {
  return new Date(now.getTime() + leaseMs).toISOString();
}

/**
 * Policy: a lease is live while `now` is strictly before its end; at the end instant it has
 * lapsed. One boundary, used by every check, so start and checkpoint never disagree.
 */
export function leaseLive(until: string, now: Date): boolean {
  return now.getTime() < Date.parse(until);
}

/** "12m", "3h 5m", "2d 1h": a rough, human span for messages (never used in a decision). */
export function span(ms: number): string {
  const m = Math.floor(Math.abs(ms) / 60_000);
  if (m < 1) return `${Math.floor(Math.abs(ms) / 1000)}s`;
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** "live until T (41m left)" or "lapsed at T (12m ago)". */
export function describeLease(until: string, now: Date): string {
  const left = Date.parse(until) - now.getTime();
  return leaseLive(until, now) ? `live until ${until} (${span(left)} left)` : `lapsed at ${until} (${span(left)} ago)`;
}
