// The library publishes as the CLI does (SPEC 11): Ledger.join, then every write of the joined
// Ledger goes through the remote, and another machine's sync sees it.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger.js';
import { bytes, world, type World } from './kit.js';

let w: World;
afterEach(() => w?.cleanup());

describe('when a program joins a remote with Ledger.join and writes through the library', () => {
  it('each write is published before it returns, and the other machine takes the same bytes', async () => {
    w = world(['lib', 'cli']);
    const [lib, cli] = w.machines;
    const key = join(lib.dir, 'keys', 'harness.key');
    const { ledger, result } = Ledger.join({ dir: lib.ledger, key, env: lib.env, remote: w.url, trust: join(lib.dir, 'keys', 'trust.json'), agent: 'lib' });
    expect(result.created).toBe(true);
    const started = await ledger.start({ slug: 'item', agent: 'lib', summary: 'library work', views: false });
    expect(started.record.seq).toBe(1);
    expect(ledger.remote()).toMatchObject({ state: 'in-sync', anchor: { seq: 1 } });
    expect((await cli.run(['init', '--remote', w.url])).code).toBe(0);
    expect(bytes(cli)).toEqual(bytes(lib));
    const refused = await cli.run(['start', 'item', '--summary', 'mine']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('owned by lib');
  });
});
