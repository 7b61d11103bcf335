// The bounded excerpt of test output kept inline in a record: its last lines, made safe to show.
// Pure. The digest in the record is always of the raw bytes; only the excerpt is cleaned.

/** Policy: the last 40 lines, at most 8 KiB, read from the last 64 KiB of the output. */
export const EXCERPT_LINES = 40;
export const EXCERPT_CHARS = 8192;
export const EXCERPT_WINDOW = 64 * 1024;

// CSI and OSC sequences (colours, cursor moves, hyperlinks) and other escapes.
const ANSI_RE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;
// Control characters other than tab and newline.
const CONTROL_RE = /[\x00-\x08\x0b-\x1f\x7f]/g;

/**
 * Terminal-safe text: escape sequences removed, a carriage return keeps only what was drawn last
 * on its line (progress bars), other control characters become U+FFFD.
 */
export function plainText(text: string): string {
  return text
    .replace(ANSI_RE, '')
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => {
      const parts = line.split('\r').filter((p) => p !== '');
      return (parts[parts.length - 1] ?? '').replace(CONTROL_RE, '\uFFFD');
    })
    .join('\n');
}

/**
 * The excerpt of `tail`, the last bytes of an output; `cut` says whether the output began before
 * them (then the first, partial line is dropped, which also drops a split UTF-8 sequence).
 */
export function excerptOf(tail: Uint8Array, cut: boolean): string {
  let text = Buffer.from(tail).toString('utf8');
  if (cut) text = text.slice(text.indexOf('\n') + 1);
  let lines = plainText(text).replace(/\n+$/, '').split('\n');
  if (lines.length > EXCERPT_LINES) lines = lines.slice(-EXCERPT_LINES);
  let out = lines.join('\n');
  if (out.length > EXCERPT_CHARS) {
    out = out.slice(-EXCERPT_CHARS);
    out = out.slice(out.indexOf('\n') + 1);
    // A cut through a surrogate pair would leave half a character (not valid UTF-8 to store).
    if (/^[\udc00-\udfff]/.test(out)) out = out.slice(1);
  }
  return out;
}
