// A log in memory for the witness tests: leaves appended one at a time (the stored hashes and
// right edge of src/tlog/tree.ts), checkpoints signed by its key as a ledger signs them.
import { formatCheckpoint } from '../../../src/tlog/checkpoint.js';
import { leafHash } from '../../../src/tlog/hash.js';
import { ed25519NoteSigner, formatVkey, signNote, type NoteSigner } from '../../../src/tlog/note.js';
import { arrayReader, proveConsistency, storedHashesForLeaf, treeHash } from '../../../src/tlog/tree.js';
import { formatAddCheckpoint } from '../../../src/tlog/witness-protocol.js';

export class TestLog {
  readonly stored: Uint8Array[] = [];
  size = 0;
  readonly signer: NoteSigner;

  constructor(readonly origin: string, seedByte = 1, readonly salt = '') {
    this.signer = ed25519NoteSigner(origin, new Uint8Array(32).fill(seedByte));
  }

  get vkey(): string {
    return formatVkey(this.signer);
  }

  append(n: number): this {
    for (let i = 0; i < n; i++) {
      this.stored.push(...storedHashesForLeaf(this.size, leafHash(`${this.salt}record ${this.size}`), arrayReader(this.stored)));
      this.size++;
    }
    return this;
  }

  root(size = this.size): Uint8Array {
    return treeHash(size, arrayReader(this.stored));
  }

  checkpoint(size = this.size, signer: NoteSigner = this.signer): string {
    return signNote(formatCheckpoint({ origin: this.origin, size, root: this.root(size) }), [signer]);
  }

  /** The add-checkpoint body from `oldSize` to `size`, with its consistency proof. */
  request(oldSize: number, size = this.size): string {
    return formatAddCheckpoint({ oldSize, proof: oldSize === 0 ? [] : proveConsistency(size, oldSize, arrayReader(this.stored)), checkpointNote: this.checkpoint(size) });
  }
}
