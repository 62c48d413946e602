// Waits for the first sync of each newly connected account and shows how far along they are: on a terminal one
// line redrawn in place, in a pipe or a log file one plain line per change (no control characters).
import { redactText } from '../log.js';
import type { SyncProgressStore } from '../store/sync-progress.js';

export type FirstSyncState = 'waiting' | 'synced' | 'retrying' | 'failed';

export interface FirstSyncRow {
  connectionId: string;
  label: string;
  state: FirstSyncState;
  /** Open slots after the sync (0 until synced). */
  slots: number;
  error: string | null;
}

export interface ConnectionSyncFields {
  status: 'active' | 'needs_reauth' | 'disabled';
  lastSyncAt: Date | null;
  /** Never 'superseded' or 'interrupted': such runs leave the connection as the last finished run left it. */
  lastSyncOutcome: 'succeeded' | 'failed' | 'superseded' | 'interrupted' | null;
  lastSyncError: string | null;
}

/** Only a sync that ended after `since` (the connect) counts: an earlier run's result says nothing new. */
export function firstSyncState(connection: ConnectionSyncFields, since: Date): FirstSyncState {
  if (connection.status !== 'active') return 'failed';
  if (connection.lastSyncAt === null || connection.lastSyncAt < since) return 'waiting';
  return connection.lastSyncOutcome === 'succeeded' ? 'synced' : 'retrying';
}

const MARK: Record<FirstSyncState, string> = { waiting: '…', synced: '✓', retrying: '↻', failed: '✗' };

export function formatProgressLine(rows: readonly FirstSyncRow[]): string {
  const done = rows.filter((r) => r.state === 'synced').length;
  const parts = rows.map(
    (r) => `${MARK[r.state]} ${r.label}${r.state === 'synced' ? ` (${r.slots} free slots)` : ''}`,
  );
  return `First syncs ${done}/${rows.length}: ${parts.join('  ')}`;
}

function describeChange(row: FirstSyncRow): string {
  switch (row.state) {
    case 'synced':
      return `First sync of ${row.label} done: ${row.slots} free slots.`;
    case 'retrying':
      return `First sync of ${row.label} failed, retrying: ${row.error ?? 'unknown error'}`;
    case 'failed':
      return `${row.label} cannot be synced: ${row.error ?? 'the connection is not active'}`;
    case 'waiting':
      return `Waiting for the first sync of ${row.label}…`;
  }
}

export interface WaitForFirstSyncsInput {
  progress: Pick<SyncProgressStore, 'syncStates' | 'openSlots'>;
  targets: readonly { connectionId: string; label: string }[];
  since: Date;
  /** `columns`: the terminal's width; the progress line is cut to it, or redrawing it would leave wrapped rows. */
  out: { write(text: string): void; isTTY: boolean; columns?: number };
  timeoutMs: number;
  /** Checked between polls: a shutdown signal ends the wait early. */
  stopRequested: () => boolean;
  intervalMs?: number;
}

/** Resolves when every account has synced or cannot be, at the timeout, or when a stop is requested. */
export async function waitForFirstSyncs(
  input: WaitForFirstSyncsInput,
): Promise<{ rows: FirstSyncRow[]; complete: boolean }> {
  const { progress, out } = input;
  const ids = input.targets.map((t) => t.connectionId);
  const deadline = Date.now() + input.timeoutMs;
  let rows: FirstSyncRow[] = input.targets.map((t) => ({
    ...t,
    state: 'waiting',
    slots: 0,
    error: null,
  }));
  if (!out.isTTY) for (const row of rows) out.write(`${describeChange(row)}\n`);
  let shown = '';

  for (;;) {
    const connections = await progress.syncStates(ids);
    const next: FirstSyncRow[] = [];
    for (const row of rows) {
      const connection = connections.find((c) => c.id === row.connectionId);
      const state = connection ? firstSyncState(connection, input.since) : 'failed';
      const slots = state === 'synced' ? await progress.openSlots(row.connectionId) : 0;
      const error = connection?.lastSyncError ? redactText(connection.lastSyncError).slice(0, 200) : null;
      const updated: FirstSyncRow = { ...row, state, slots, error: state === 'synced' ? null : error };
      if (!out.isTTY && (updated.state !== row.state || updated.error !== row.error)) {
        out.write(`${describeChange(updated)}\n`);
      }
      next.push(updated);
    }
    rows = next;
    if (out.isTTY) {
      const line = formatProgressLine(rows).slice(0, Math.max(20, (out.columns ?? 100) - 1));
      if (line !== shown) out.write(`\r\u001b[2K${line}`);
      shown = line;
    }
    const settled = rows.every((r) => r.state === 'synced' || r.state === 'failed');
    if (settled || Date.now() > deadline || input.stopRequested()) {
      if (out.isTTY) out.write('\n');
      return { rows, complete: rows.every((r) => r.state === 'synced') };
    }
    await new Promise((resolve) => setTimeout(resolve, input.intervalMs ?? 250));
  }
}
