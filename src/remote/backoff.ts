// When a writer of a ledger joined to a remote waits (SPEC 11: "bounded, jittered retries"),
// as pure functions of what the writer knows and a source of randomness passed in, so the
// policy is tested without clocks (test/remote/backoff.test.ts); link.ts does the sleeping.
//
// Policy: seniority. The ref is won by whichever push lands first after the ref last moved.
// The machine that published last knows the tip without fetching, so its next write's window
// (tip learned -> push landed) is a build and a push, while a loser's holds a fetch, the
// verification and the adoption too: measured with eight clones on two cores, the last winner
// published again and again (a clone's four appends in a row) while the others lost 15-20
// times, and the slowest append waited 25-34x the median. So:
//   - a write that starts while its machine lost a race in the last CONTENDED_MS (link.ts)
//     first yields for about one loser's attempt (YIELD_MIN_MS..YIELD_MAX_MS), before it asks
//     the remote, so the writers already racing land first;
//   - after its k-th lost race a writer pauses at most RETRY_CAP_MS / 2^(k-1), never below
//     RETRY_FLOOR_MS: the longer it has waited, the sooner it tries again, so an old loser
//     does not keep losing to newer ones (it was the other way round: exponential growth
//     made the oldest loser the slowest to come back).
// Every pause is full jitter (uniform from 1 ms to the cap), so writers that lost together do
// not come back together, and bounded: a write yields at most once, and its pauses together
// stay under RETRY_CAP_MS * 2 + RETRY_FLOOR_MS * attempts.

/** A uniform integer in [lo, hi] (both inclusive): crypto's randomInt in use, a seeded one in tests. */
export type RandomInt = (lo: number, hi: number) => number;

export const YIELD_MIN_MS = 150;
export const YIELD_MAX_MS = 350;
export const RETRY_CAP_MS = 200;
export const RETRY_FLOOR_MS = 25;

/** The pause before a write's first attempt: a yield when its machine lost a race recently, else none. */
export function yieldMs(contended: boolean, rand: RandomInt): number {
  return contended ? rand(YIELD_MIN_MS, YIELD_MAX_MS) : 0;
}

/** The cap of the pause after the `lost`-th lost race of one write (1-based): halving, with a floor. */
export function retryCapMs(lost: number, cap = RETRY_CAP_MS): number {
  const k = Math.max(1, Math.floor(lost));
  // 2^(k-1) overflows nothing: past 30 halvings the floor has long been reached.
  return Math.max(Math.min(RETRY_FLOOR_MS, cap), Math.floor(cap / 2 ** Math.min(k - 1, 30)));
}

/** The pause after the `lost`-th lost race of one write: full jitter below retryCapMs. */
export function retryPauseMs(lost: number, rand: RandomInt, cap = RETRY_CAP_MS): number {
  return rand(1, retryCapMs(lost, cap));
}
