// Aligned columns for the verbs that print a table (log, pending, ...): each column as wide as
// its widest cell, two spaces between, numbers right-aligned, the last column never padded (so
// no line ends in spaces). Widths count code points; text is neutralised later, at the sink
// (commands/common.ts emit), so a cell with a control character may sit a little wider.

export type Align = 'left' | 'right';

/** The rows as lines, columns aligned. `align` per column (default left). */
export function formatTable(rows: readonly (readonly string[])[], align: readonly Align[] = []): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, width(cell))));
  return rows.map((row) =>
    row
      .map((cell, i) => {
        if (i === row.length - 1 && align[i] !== 'right') return cell;
        const pad = ' '.repeat(widths[i] - width(cell));
        return align[i] === 'right' ? pad + cell : cell + pad;
      })
      .join('  '),
  );
}

function width(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
