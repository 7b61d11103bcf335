// The small project of the handoff-log essay: an npm package whose test script fails 2 of 16 on a
// timezone helper. toLocal() drops the sign of a negative offset; the fix keeps it. The runner
// prints TAP-like lines, a failure's assertion and two stack frames, like a real one.
import { BIN } from '../helpers/cli.js';

export const PACKAGE = JSON.stringify({
  name: 'tzapp', version: '1.0.0', private: true, type: 'module',
  // The essay's CLI, `npm run handoff -- ...`: in this scratch project, the binary just built.
  scripts: { test: 'node test/tz.test.js', handoff: `node ${JSON.stringify(BIN)}` },
}, null, 2) + '\n';

/** toLocal(utcMinutes, offsetMinutes): the local minute of the day. */
export const TZ_BROKEN = `// toLocal(utc, offset): the local minute of the day, offset in minutes east of UTC.
export function toLocal(utc, offset) {
  return (utc + Math.abs(offset)) % 1440;
}
`;

/** An attempt that does not work either (claude's last commit before its usage limit). */
export const TZ_ATTEMPT = `// toLocal(utc, offset): the local minute of the day, offset in minutes east of UTC.
export function toLocal(utc, offset) {
  return (utc + Math.sign(offset) * Math.abs(offset)) % 1440; // wip: still negative below 0
}
`;

export const TZ_FIXED = `// toLocal(utc, offset): the local minute of the day, offset in minutes east of UTC.
export function toLocal(utc, offset) {
  return (((utc + offset) % 1440) + 1440) % 1440;
}
`;

export const TZ_TEST = `import { toLocal } from '../src/tz.js';

const east = [0, 60, 120, 180, 240, 300, 330, 420, 480, 540, 600, 660, 720, 840];
const cases = east.map((off) => [720, off, (720 + off) % 1440]);
cases.push([720, -300, 420], [60, -300, 1200]);

let pass = 0;
let fail = 0;
cases.forEach(([utc, off, want], i) => {
  const got = toLocal(utc, off);
  if (got === want) {
    pass++;
    console.log(\`ok \${i + 1} toLocal(\${utc}, \${off})\`);
  } else {
    fail++;
    console.log(\`not ok \${i + 1} toLocal(\${utc}, \${off})\`);
    console.log(\`  AssertionError: toLocal(\${utc}, \${off}): expected \${want}, got \${got}\`);
    console.log('      at check (test/tz.test.js:10:15)');
    console.log('      at Array.forEach (<anonymous>)');
  }
});
console.log(\`# tests \${pass + fail}\`);
console.log(\`# pass \${pass}\`);
console.log(\`# fail \${fail}\`);
process.exitCode = fail ? 1 : 0;
`;

export const TZ_FILES = {
  'package.json': PACKAGE,
  'README.md': '# tzapp\n\nTime zone helpers.\n',
  'src/tz.js': TZ_BROKEN,
  'test/tz.test.js': TZ_TEST,
};
