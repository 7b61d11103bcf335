// Shared by the audit tests: write a ledger (built or as bytes) into a scratch folder and audit
// it with one injected `now`. The trust file lives outside the ledger, as a consumer keeps it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { runAuditSyncInternal as auditLedger, type AuditReport } from '../../audit/index.js';
import type { Trust } from '../../src/keys/trust.js';
import { headForLines, serializeLedger, signerFor, type BuiltLedger, type LedgerFiles } from '../helpers/gen-ledger.js';

/** After every default-generated ledger (they start 2026-11-29T12:00:00Z, one record a second). */
export const NOW = Date.parse('2026-11-29T13:00:00.000Z');

let root: string | null = null;
let n = 0;
/** A fresh folder under one scratch root per test file, removed after the file's tests. */
export function freshDir(): string {
  if (root === null) {
    root = mkdtempSync(join(tmpdir(), 'audit-test-'));
    const r = root;
    afterAll(() => rmSync(r, { recursive: true, force: true }));
  }
  const dir = join(root, String(n++));
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface Written { base: string; dir: string; trust: Trust }

/** Writes records.jsonl and HEAD into <base>/ledger; returns where. */
export function writeLedger(led: BuiltLedger | LedgerFiles, trust?: Trust): Written {
  const files = 'lines' in led ? serializeLedger(led) : led;
  const base = freshDir();
  const dir = join(base, 'ledger');
  mkdirSync(dir);
  writeFileSync(join(dir, 'records.jsonl'), files.records);
  writeFileSync(join(dir, 'HEAD'), files.head);
  return { base, dir, trust: trust ?? ('lines' in led ? led.trust : (JSON.parse(files.trust) as Trust)) };
}

type Extra = Partial<Parameters<typeof auditLedger>[0]>;

/** Writes and audits in one step. */
export function audit(led: BuiltLedger | LedgerFiles, extra: Extra & { trust?: Trust } = {}): AuditReport {
  const w = writeLedger(led, extra.trust);
  return auditLedger({ dir: w.dir, trust: w.trust, now: NOW, ...extra });
}

/** The verdict in one comparable object. */
export function verdict(r: AuditReport) {
  return { layer: r.failed_layer, seq: r.failure?.seq ?? null, code: r.findings[0]?.code ?? null };
}

/**
 * Edits a built ledger's lines and re-signs HEAD over them with the harness key: the tampered
 * variants the layer tests feed to the audit.
 */
export function lineEditor(led: BuiltLedger): (change: (lines: string[]) => void) => LedgerFiles {
  const harness = signerFor('harness');
  const files = serializeLedger(led);
  return (change) => {
    const lines = [...led.lines];
    change(lines);
    return { ...files, records: Buffer.from(lines.join('')), head: Buffer.from(headForLines(lines, harness).line) };
  };
}
