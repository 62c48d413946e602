// The zones a report counts days, weeks and hours in, as names this Postgres knows. Reports count them in SQL
// (AT TIME ZONE, over every row), but a connection's zone comes from the upstream and was checked by luxon only:
// ICU knows names the database's tzdata may lack (US/Pacific-New on Postgres 15; Europe/Kyiv or
// America/Ciudad_Juarez on an older one), and one such name in a query fails the whole report (issue 41). Each
// name Postgres lacks is replaced, for the report, by one it knows that luxon says keeps the same time: ICU's
// own name for it (America/Los_Angeles for US/Pacific-New), else a zone with the same offsets on every day from
// two years before the report's instant to one after.
import { DateTime } from 'luxon';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { ReportScope } from './report-scope.js';

/** What a report's queries read with; declared here, where the zone check needs it first, and re-exported by report-sql.ts. */
export type ReportDb = Pick<PrismaClient, '$queryRaw'>;

/**
 * What the zone check reads with: a report's client or transaction (ReportDb), or a plain node-postgres connection
 * the CSV export holds (store/report-queries/csv-export.ts); it asks only for rows of a Prisma.Sql.
 */
export interface ZoneReader {
  $queryRaw<T>(query: Prisma.Sql): Promise<T>;
}

const DAY_MS = 86_400_000;
const YEARS_BEFORE = 2;
const YEARS_AFTER = 1;

/** Thrown when a zone has no stand-in Postgres knows; the message names it and what to do. */
export class ReportZoneError extends Error {
  constructor(zone: string) {
    super(
      `the time zone "${zone}" is unknown to this Postgres and no zone it knows keeps the same time: ` +
        'give --tz with a zone it knows (or update the database’s time zone data)',
    );
    this.name = 'ReportZoneError';
  }
}

function offsetsAgree(a: string, b: string, fromMs: number, untilMs: number): boolean {
  for (let ms = fromMs; ms < untilMs; ms += DAY_MS / 2) {
    if (DateTime.fromMillis(ms, { zone: a }).offset !== DateTime.fromMillis(ms, { zone: b }).offset)
      return false;
  }
  return true;
}

/** ICU's own name for `zone` (America/Los_Angeles for US/Pacific-New), or undefined when ICU lacks it. */
function icuNameOf(zone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/**
 * A name from `known` (Postgres's) that keeps the same time as `zone` around `at`, as luxon reads both; `zone`
 * itself when Postgres knows it; undefined when none does.
 */
export function postgresZoneFor(zone: string, known: ReadonlySet<string>, at: Date): string | undefined {
  if (known.has(zone)) return zone;
  const icuName = icuNameOf(zone);
  // ICU does not know it either: nothing can tell which zone keeps its time.
  if (icuName === undefined) return undefined;
  if (known.has(icuName)) return icuName;
  const fromMs = DateTime.fromJSDate(at).minus({ years: YEARS_BEFORE }).toMillis();
  const untilMs = DateTime.fromJSDate(at).plus({ years: YEARS_AFTER }).toMillis();
  const region = zone.split('/')[0];
  // Same region first (America/Denver for America/Ciudad_Juarez), then any; a cheap look at two instants first.
  const candidates = [...known]
    .filter((name) => name.includes('/') && !name.startsWith('posix/') && !name.startsWith('right/'))
    .sort(
      (a, b) => Number(b.split('/')[0] === region) - Number(a.split('/')[0] === region) || a.localeCompare(b),
    );
  return candidates.find(
    (name) =>
      offsetsAgree(zone, name, fromMs, fromMs + 1) &&
      offsetsAgree(zone, name, fromMs + 183 * DAY_MS, fromMs + 183 * DAY_MS + 1) &&
      offsetsAgree(zone, name, fromMs, untilMs),
  );
}

/** Zones as names Postgres knows: each lacking one's stand-in, and those with none (no report can count them). */
export interface PostgresZoneStandIns {
  standIns: ReadonlyMap<string, string>;
  unknown: readonly string[];
}

/** The names of the zones a Postgres knows (pg_timezone_names), read with `db` when they must be read. */
export type PostgresZoneNames = (db: ZoneReader) => Promise<ReadonlySet<string>>;

/** How long the names are kept: a Postgres's zone data changes only when it is upgraded. */
export const ZONE_NAMES_KEPT_MS = 10 * 60_000;

/**
 * The names of the zones a Postgres knows, read at most once every `keptMs`: reading them scans its whole zone
 * database (40–90 ms here), which every report paid before its first query. Read with the caller's own `db` (a
 * report's transaction), so that no report waits for a second pooled connection; a failed read is not kept.
 */
export function postgresZoneNames(
  keptMs = ZONE_NAMES_KEPT_MS,
  now: () => number = Date.now,
): PostgresZoneNames {
  let kept: { names: Promise<ReadonlySet<string>>; readAtMs: number } | undefined;
  const read = (db: ZoneReader) =>
    db
      .$queryRaw<{ name: string }[]>(Prisma.sql`SELECT name FROM pg_timezone_names`)
      .then((rows): ReadonlySet<string> => new Set(rows.map((row) => row.name)));
  return (db) => {
    if (kept === undefined || now() - kept.readAtMs >= keptMs) {
      const reading = { names: read(db), readAtMs: now() };
      kept = reading;
      reading.names.catch(() => {
        if (kept === reading) kept = undefined;
      });
      return reading.names;
    }
    // Another report's read, kept or under way: should it fail (that report's transaction cancelled, say), this
    // report reads them with its own.
    return kept.names.catch(() => read(db));
  };
}

/** The stand-ins of those of `zones` Postgres lacks (by `knownNames`), around `at` (postgresZoneFor). */
export async function postgresZoneStandIns(
  db: ZoneReader,
  knownNames: PostgresZoneNames,
  zones: readonly string[],
  at: Date,
): Promise<PostgresZoneStandIns> {
  if (zones.length === 0) return { standIns: new Map(), unknown: [] };
  const known = await knownNames(db);
  const lacking = zones.filter((zone) => !known.has(zone));
  const standIns = new Map<string, string>();
  const unknown: string[] = [];
  for (const zone of lacking) {
    const standIn = postgresZoneFor(zone, known, at);
    if (standIn === undefined) unknown.push(zone);
    else standIns.set(zone, standIn);
  }
  return { standIns, unknown };
}

/** The zones of the connections in `connectionId`'s scope (every connection without one), none twice. */
export async function connectionZones(db: ZoneReader, connectionId?: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ zone: string }[]>(Prisma.sql`
    SELECT DISTINCT timezone AS zone FROM connection
    WHERE timezone IS NOT NULL
      ${connectionId === undefined ? Prisma.empty : Prisma.sql`AND id = ${connectionId}::uuid`}`);
  return rows.map((row) => row.zone);
}

/**
 * `scope` with every zone its queries name (--tz, or each connection's own in its scope) one Postgres knows:
 * `timezone` replaced, and `postgresZones` mapping each connection zone Postgres lacks to its stand-in.
 */
export async function withPostgresZones<S extends ReportScope>(
  db: ZoneReader,
  scope: S,
  knownNames: PostgresZoneNames,
): Promise<S> {
  const own = scope.timezone !== undefined ? [] : await connectionZones(db, scope.connectionId);
  const zones = [...new Set([...(scope.timezone === undefined ? [] : [scope.timezone]), ...own])];
  const { standIns, unknown } = await postgresZoneStandIns(db, knownNames, zones, scope.at);
  if (unknown.length > 0) throw new ReportZoneError(unknown[0]!);
  if (standIns.size === 0) return scope;
  return scope.timezone === undefined
    ? { ...scope, postgresZones: standIns }
    : { ...scope, timezone: standIns.get(scope.timezone) ?? scope.timezone };
}
