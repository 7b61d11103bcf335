// The documentation against the code (issue 22 items 1 and 6): the README stays a front door (at
// most 15 KiB, the two commands developers and CI run), every relative link in README.md and
// docs/ leads to a file and a heading that exist, docs/README.md lists every page, and each
// number the docs state about a limit, default or timeout is the constant the code uses, so a
// change to one without the other fails here. (The commands the docs give are run by the tests
// that read them: test/scenarios/ci-recipe.test.ts, ci-across-machines.test.ts,
// test/cli/exit-codes.test.ts, test/install/pack.test.ts.)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SKEW_MS } from '../audit/index.js';
import { MAX_LISTED } from '../audit/findings.js';
import { CHECKPOINT_CADENCE_MS, CONTEXT_MAX_CHARS, CONTEXT_MAX_LINES } from '../src/agents/hooks/rules.js';
import { HOOK_TIMEOUT_S } from '../src/agents/setup/common.js';
import { MAX_DEPENDENCY_DEPTH } from '../src/causal/gate/inputs.js';
import { PAGE_BUCKETS } from '../src/causal/index/segment-format.js';
import { EXCERPT_CHARS, EXCERPT_LINES } from '../src/handoff/excerpt.js';
import { MEMO_EVERY } from '../src/handoff/fold-memo.js';
import { DEFAULT_LEASE_MS } from '../src/handoff/lease.js';
import { ACTIVE_LIMIT, TRAIL_LENGTH } from '../src/handoff/render-yml.js';
import { LOG_LIMIT as MD_LOG_LIMIT, OPEN_LIMIT as MD_OPEN_LIMIT, OPERATIONS_LIMIT as MD_OPERATIONS_LIMIT } from '../src/handoff/render-md.js';
import { RESUME_MAX_LINES, RESUME_MIN_EXCERPT } from '../src/handoff/resume.js';
import { STATUS_MAX_ROWS } from '../src/handoff/status.js';
import { DEFAULT_TESTS_TIMEOUT_MS } from '../src/handoff/tests-cmd.js';
import { MAX_LEASE_MS, MAX_TESTS_TIMEOUT_MS } from '../src/requests/work.js';
import { MAX_LINE_BYTES } from '../src/record.js';
import { RETRY_CAP_MS, RETRY_FLOOR_MS, YIELD_MAX_MS, YIELD_MIN_MS } from '../src/remote/backoff.js';
import { LOCAL_TIMEOUT_MS, NETWORK_TIMEOUT_MS } from '../src/remote/git.js';
import { ATTEMPTS, CONTENDED_MS } from '../src/remote/link.js';
import { SHARD } from '../src/remote/tree.js';
import { DEFAULT_WAIT_MS } from '../src/store/append.js';
import { MAX_CANDIDATES, MIN_PREFIX_HEX } from '../src/store/ids.js';
import { LOG_LIMIT } from '../src/store/state-log.js';
import { SAFE_PATH } from '../src/fs/boundary.js';
import { MAX_MESSAGE_BYTES } from '../src/agents/mcp-front.js';
import { HOOK_STDIN_MAX } from '../src/cli/commands/agents-run.js';
import { BATCH_MAX_BYTES } from '../src/cli/commands/write-run.js';
import { OBJECT_MAX } from '../src/remote/tree.js';
import { ROOT } from './helpers/cli.js';

const DOCS = join(ROOT, 'docs');
const pages = (): string[] => ['README.md', ...readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
const read = (page: string): string => readFileSync(join(ROOT, page), 'utf8');

/** The text of a page outside its fenced code blocks (links and headings there are not Markdown). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
}

function anchorsOf(page: string): Set<string> {
  return new Set([...prose(read(page)).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
}

describe('when a newcomer opens the README', () => {
  it('is a front door of at most 15 KiB', () => {
    expect(statSync(join(ROOT, 'README.md')).size).toBeLessThanOrEqual(15 * 1024);
  });

  it('gives the two commands a developer runs, which CI runs too (`npm test`: .ci/run)', () => {
    const blocks = [...read('README.md').matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]);
    const lines = blocks.flatMap((b) => b.split('\n')).map((l) => l.replace(/#.*$/, '').trim());
    expect(lines).toContain('npm ci && npm run demo');
    expect(lines).toContain('npm test');
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(Object.keys(scripts)).toEqual(expect.arrayContaining(['demo', 'test']));
    expect(read('.ci/run')).toMatch(/^npm test /m);
  });

  it('has a LICENSE, the Apache License 2.0 that package.json names', () => {
    expect((JSON.parse(read('package.json')) as { license: string }).license).toBe('Apache-2.0');
    const license = read('LICENSE');
    expect(license).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(license).toContain('END OF TERMS AND CONDITIONS');
  });
});

describe('when a reader follows the links of the README and docs/', () => {
  it('lists every page of docs/ in docs/README.md', () => {
    const index = read('docs/README.md');
    for (const f of readdirSync(DOCS).filter((n) => n.endsWith('.md') && n !== 'README.md')) expect(index, f).toContain(`](${f})`);
  });

  it('finds the file and the heading every relative link names', () => {
    const broken: string[] = [];
    for (const page of pages()) {
      for (const m of prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1];
        if (/^[a-z]+:/.test(link)) continue; // https:, mailto:
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? join(ROOT, page) : resolve(ROOT, dirname(page), path);
        if (!existsSync(target)) {
          broken.push(`${page}: ${link} (no file)`);
          continue;
        }
        if (anchor !== undefined && !anchorsOf(relative(ROOT, target)).has(anchor)) broken.push(`${page}: ${link} (no heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.(c?ts|mjs)$/.test(e.name) ? [join(dir, e.name)] : []);
}

describe('when the code points a reader at the docs', () => {
  // The CLI's own messages name README sections (init's .gitignore comment, doctor's fixes, the
  // hints), and comments name docs/ pages: each must lead to a heading that exists.
  it('names only README headings and docs/ pages and headings that exist', () => {
    const broken: string[] = [];
    for (const file of [...sourceFiles('src'), ...sourceFiles('audit')]) {
      const text = read(file).replace(/\s*\n\s*(?:\/\/|\*)?\s*/g, ' ');
      for (const m of text.matchAll(/\bREADME,? "([^"]+)"/g)) {
        if (!anchorsOf('README.md').has(slug(m[1]))) broken.push(`${file}: README "${m[1]}"`);
      }
      for (const m of text.matchAll(/\bdocs\/([a-z-]+\.md)(?: \("?| ")?([^"()]*")?/g)) {
        const page = join('docs', m[1]);
        if (!existsSync(join(ROOT, page))) broken.push(`${file}: ${page} (no file)`);
        else if (m[2] !== undefined && !anchorsOf(page).has(slug(m[2].slice(0, -1)))) broken.push(`${file}: ${page} "${m[2].slice(0, -1)}"`);
      }
    }
    expect(broken).toEqual([]);
  });
});

const minutes = (ms: number): number => ms / 60_000;
const days = (ms: number): number => ms / 86_400_000;
const WORDS: Record<number, string> = { 3: 'three', 5: 'five' };

/** Each page, and the phrases it must hold, built from the constants the code uses. */
const NUMBERS: [page: string, phrases: string[]][] = [
  ['README.md', [
    `default ${minutes(DEFAULT_LEASE_MS)} minutes`,
    `at most ${RESUME_MAX_LINES} lines`,
  ]],
  ['docs/handoff-log.md', [
    `default \`${minutes(DEFAULT_LEASE_MS)}m\`, at most \`${days(MAX_LEASE_MS)}d\``,
    `\`--tests-timeout\`, default \`${minutes(DEFAULT_TESTS_TIMEOUT_MS)}m\`, at most \`${days(MAX_TESTS_TIMEOUT_MS)}d\``,
    `the last ${EXCERPT_LINES} lines of output (at most ${EXCERPT_CHARS} characters`,
    `At most ${RESUME_MAX_LINES} lines`,
    `fewer than ${RESUME_MIN_EXCERPT}`,
    `the ${WORDS[TRAIL_LENGTH]} entries before it`,
    `\`trail\` (the ${WORDS[TRAIL_LENGTH]} before it`,
    `the last ${WORDS[3]} \`notes\``,
    `\`active\` lists at most ${ACTIVE_LIMIT} items`,
    `shows the ${MD_OPEN_LIMIT} open items most recently worked on`,
    `\`HANDOFF.md\` shows up to ${MD_OPEN_LIMIT},`,
    `only the ${MD_OPERATIONS_LIMIT} operations with the newest`,
    `the ${MD_LOG_LIMIT} newest log entries`,
    `at most ${STATUS_MAX_ROWS} rows per section`,
  ]],
  ['docs/formats.md', [
    `the writer keeps ${EXCERPT_LINES} lines and at most ${EXCERPT_CHARS}`,
    `1 MiB (${MAX_LINE_BYTES.toLocaleString('en')} bytes)`,
    `more than ${MEMO_EVERY} records lie past it`,
    `each page of ${PAGE_BUCKETS} buckets`,
    `\`floor(seq / ${SHARD})\``,
  ]],
  ['docs/across-machines.md', [
    `up to ${ATTEMPTS} attempts`,
    `lost no race in the last ${CONTENDED_MS / 1000} s`,
    `first yields ${YIELD_MIN_MS}-${YIELD_MAX_MS} ms`,
    `up to ${RETRY_CAP_MS}/2^(k-1) ms (at least ${RETRY_FLOOR_MS} ms)`,
    `${NETWORK_TIMEOUT_MS / 1000} s for a command that talks to the remote, ${LOCAL_TIMEOUT_MS / 1000} s for a local one`,
  ]],
  ['docs/guarantees.md', [
    `kept moving for ${ATTEMPTS} attempts`,
    `past ${LOG_LIMIT / 1024} KiB`,
  ]],
  ['docs/cli.md', [
    `default \`${DEFAULT_WAIT_MS / 1000}s\``,
    `these ${MIN_PREFIX_HEX} or more lowercase hex digits`,
    `(at most ${MAX_CANDIDATES}, with their seqs`,
    `(default ${minutes(DEFAULT_SKEW_MS)}m)`,
    `(up to ${MAX_LISTED.toLocaleString('en')} listed)`,
  ]],
  ['docs/causal-handoffs.md', [`nesting deeper than ${MAX_DEPENDENCY_DEPTH} holds`]],
  ['docs/agents.md', [
    `At most ${CONTEXT_MAX_LINES} lines and ${CONTEXT_MAX_CHARS} characters`,
    `has not checkpointed for ${minutes(CHECKPOINT_CADENCE_MS)} minutes`,
    `a ${HOOK_TIMEOUT_S} s timeout`,
    `at most ${STATUS_MAX_ROWS} rows per list`,
    `default timeout ${minutes(DEFAULT_TESTS_TIMEOUT_MS)} minutes`,
  ]],
  ['docs/library.md', [`(default ${DEFAULT_WAIT_MS.toLocaleString('en')})`]],
  // issue 23: the bounds of every input, and the children's PATH
  ['docs/guarantees.md', [`\`PATH=${SAFE_PATH}\``, `over ${BATCH_MAX_BYTES / 2 ** 20} MiB (\`INPUT_TOO_LARGE\`)`, `(1 MiB and its newline;`]],
  ['docs/cli.md', [`stdin (at most ${BATCH_MAX_BYTES / 2 ** 20} MiB)`]],
  ['docs/agents.md', [`for at most 5 s and ${HOOK_STDIN_MAX / 2 ** 20} MiB`, `A message over ${(MAX_MESSAGE_BYTES + 1) / 2 ** 20} MiB`]],
  ['docs/across-machines.md', [`one over ${(OBJECT_MAX - 1) / 2 ** 20} MiB and its`]],
];

describe('when the docs state a number the code decides', () => {
  it.each(NUMBERS)('%s says what the constants say', (page, phrases) => {
    // Compared with runs of white space as one space: a phrase may wrap in the Markdown source.
    const flat = (t: string): string => t.replace(/\s+/g, ' ');
    const text = flat(read(page));
    expect(phrases.filter((phrase) => !text.includes(flat(phrase))), `${page} should say each of these`).toEqual([]);
  });
});
