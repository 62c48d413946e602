// What every part of the CalDAV destinations store shares (store/caldav-destinations.ts composes them): the
// destination's record as callers see it, its errors, and how its row is read and its password bound to it.
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';

export const CALDAV_DESTINATION_STATES = ['active', 'needs_credentials', 'failing', 'paused'] as const;
export type CaldavDestinationState = (typeof CALDAV_DESTINATION_STATES)[number];

/** A destination as callers see it: everything but the password. */
export interface CaldavDestinationRecord {
  id: string;
  feedId: string;
  /** The server's address as given. */
  serverUrl: string;
  /** The calendar found or made on the server, where the events are written. */
  calendarUrl: string;
  username: string;
  calendarName: string;
  state: CaldavDestinationState;
  lastPushAt: Date | null;
  /** What went wrong last, without secrets; null after a push that went through. */
  lastError: string | null;
  /** Changes to what the feed shows that no push has carried yet. */
  pendingChanges: number;
  /** When the oldest of them was committed. */
  pendingSince: Date | null;
  /** No push before this (backoff, or the server's Retry-After); null: any time. */
  retryAt: Date | null;
  consecutiveFailures: number;
  lastReconciledAt: Date | null;
  reconcileRequestedAt: Date | null;
  createdAt: Date;
}

export interface CaldavCredentials {
  username: string;
  password: string;
}

export class CaldavDestinationNotFoundError extends Error {
  constructor(readonly destinationId: string) {
    super(`no CalDAV destination with id ${destinationId}`);
    this.name = 'CaldavDestinationNotFoundError';
  }
}

export class CalendarTakenError extends Error {
  constructor(readonly calendarUrl: string) {
    super(
      `the calendar ${calendarUrl} is written by another slotfeed destination already; choose another calendar`,
    );
    this.name = 'CalendarTakenError';
  }
}

export const DESTINATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The associated data a destination's password is sealed with: a sealed copy moved to another row fails. */
/** The host a destination's pushes are limited by (host-limits.ts): its calendar's, port included. */
export const calendarHost = (calendarUrl: string): string => new URL(calendarUrl).host;

export const sealingContext = (destinationId: string) => `caldav-destination:${destinationId}`;

export const RECORD_FIELDS = {
  id: true,
  feedId: true,
  serverUrl: true,
  calendarUrl: true,
  username: true,
  calendarName: true,
  state: true,
  lastPushAt: true,
  lastError: true,
  pendingChanges: true,
  pendingSince: true,
  retryAt: true,
  consecutiveFailures: true,
  lastReconciledAt: true,
  reconcileRequestedAt: true,
  createdAt: true,
} as const satisfies Prisma.CaldavDestinationSelect;

export const isKnown = (error: unknown, code: string) =>
  error instanceof Prisma.PrismaClientKnownRequestError && error.code === code;

/** The destination's record; CaldavDestinationNotFoundError for an unknown id or one that is not an id. */
export async function destinationRecord(
  prisma: PrismaClient,
  destinationId: string,
): Promise<CaldavDestinationRecord> {
  const row = DESTINATION_ID.test(destinationId)
    ? await prisma.caldavDestination.findUnique({ where: { id: destinationId }, select: RECORD_FIELDS })
    : null;
  if (!row) throw new CaldavDestinationNotFoundError(destinationId);
  return row;
}
