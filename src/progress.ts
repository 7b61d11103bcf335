// Progress of a long scan (issue 14: "show progress for long operations on a TTY"): the first
// fold of a big ledger (../handoff/fold-memo.ts) and an index build (../causal/index/rows.ts)
// report how far they are; the CLI shows it as one line on a terminal's stderr (cli/progress-line.ts)
// and nothing anywhere else. The library never writes to a stream: without a sink, a report is
// one comparison.
export type ProgressSink = (what: string, done: number, total: number, unit: string) => void;

let sink: ProgressSink | null = null;

/** Installs (or, with null, removes) where progress goes; returns the one it replaced. */
export function setProgressSink(next: ProgressSink | null): ProgressSink | null {
  const was = sink;
  sink = next;
  return was;
}

/** How often a scan reports, in records: cheap enough to ignore, often enough to look alive. */
export const PROGRESS_EVERY = 4096;

export function reportProgress(what: string, done: number, total: number, unit = 'records'): void {
  if (sink !== null) sink(what, done, total, unit);
}
