// The checks every feed slotfeed serves must pass, beyond what ical.js tolerates (it accepts bare LF, long
// lines and duplicate UIDs): calendar apps differ in what they forgive, so the feed forgives nothing.
// Usage: `assertStrictIcs(body)`; it throws an Error naming the line or event at fault.
import ICAL from 'ical.js-v2';

const MAX_LINE_OCTETS = 75;
const UTC_DATE_TIME = /^\d{8}T\d{6}Z$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

type Component = InstanceType<typeof ICAL.Component>;

function fail(message: string): never {
  throw new Error(`strict iCalendar check failed: ${message}`);
}

const excerpt = (line: string) => JSON.stringify(line.length > 60 ? `${line.slice(0, 60)}…` : line);

/** 1-based line number of a string index, counting every kind of line break. */
const lineAt = (text: string, index: number) => (text.slice(0, index).match(/\r\n|\r|\n/g)?.length ?? 0) + 1;

function checkLines(text: string): void {
  if (!text.startsWith('BEGIN:VCALENDAR')) fail('must start with "BEGIN:VCALENDAR"');
  const bareLf = /(?<!\r)\n/.exec(text);
  if (bareLf) fail(`line ${lineAt(text, bareLf.index)}: LF without CR`);
  const bareCr = /\r(?!\n)/.exec(text);
  if (bareCr) fail(`line ${lineAt(text, bareCr.index)}: CR without LF`);
  if (!text.endsWith('END:VCALENDAR\r\n')) fail('must end with "END:VCALENDAR" + CRLF');
  const lines = text.slice(0, -2).split('\r\n');
  lines.forEach((line, index) => {
    const n = index + 1;
    if (line.length === 0) fail(`line ${n}: empty line`);
    if (LONE_SURROGATE.test(line)) {
      fail(`line ${n}: a character was split (lone UTF-16 surrogate): ${excerpt(line)}`);
    }
    const octets = Buffer.byteLength(line, 'utf8');
    if (octets > MAX_LINE_OCTETS) {
      fail(`line ${n}: ${octets} octets, more than ${MAX_LINE_OCTETS}: ${excerpt(line)}`);
    }
  });
}

function parseCalendar(text: string): Component {
  let jcal: unknown;
  try {
    jcal = ICAL.parse(text);
  } catch (e: unknown) {
    fail(`ICAL.parse threw: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!Array.isArray(jcal) || jcal[0] !== 'vcalendar') fail('expected exactly one VCALENDAR');
  return new ICAL.Component(jcal);
}

/** The raw values of every `name` property, anywhere in the text, unfolded and unparsed. */
function rawValues(text: string, name: string): string[] {
  const unfolded = text.replace(/\r\n[ \t]/g, '');
  const prefix = new RegExp(`^${name}(;[^:]*)?:(.*)$`, 'gm');
  return [...unfolded.matchAll(prefix)].map((m) => (m[2] ?? '').replace(/\r$/, ''));
}

function checkEvent(event: Component, index: number, uids: Map<string, number>): void {
  const where = `VEVENT #${index + 1}`;
  for (const name of ['uid', 'dtstamp', 'dtstart']) {
    const count = event.getAllProperties(name).length;
    if (count !== 1) fail(`${where}: ${count} ${name.toUpperCase()} properties, expected exactly 1`);
  }
  for (const name of ['dtend', 'transp', 'sequence', 'summary', 'last-modified', 'status', 'url']) {
    const count = event.getAllProperties(name).length;
    if (count > 1) fail(`${where}: ${count} ${name.toUpperCase()} properties, expected at most 1`);
  }
  const uid = String(event.getFirstPropertyValue('uid'));
  const where2 = `${where} (UID ${uid})`;
  const previous = uids.get(uid);
  if (previous !== undefined) fail(`${where2}: UID already used by VEVENT #${previous + 1}`);
  uids.set(uid, index);

  const start = event.getFirstPropertyValue('dtstart');
  const end = event.getFirstPropertyValue('dtend');
  if (!(start instanceof ICAL.Time) || start.isDate) fail(`${where2}: DTSTART is not a DATE-TIME`);
  if (event.getAllProperties('duration').length > 0) fail(`${where2}: DURATION instead of DTEND`);
  if (!(end instanceof ICAL.Time) || end.isDate) fail(`${where2}: DTEND missing or not a DATE-TIME`);
  if (end.toUnixTime() <= start.toUnixTime()) {
    fail(`${where2}: DTEND ${end.toString()} is not after DTSTART ${start.toString()}`);
  }
  // Free time never blocks anyone's calendar; busy time does, and Outlook's own property must say the same.
  const transp = event.getFirstPropertyValue('transp');
  const busyStatus = event.getFirstPropertyValue('x-microsoft-cdo-busystatus');
  const expected = { TRANSPARENT: 'FREE', OPAQUE: 'BUSY' }[String(transp)];
  if (expected === undefined) fail(`${where2}: TRANSP is ${String(transp)}, expected TRANSPARENT or OPAQUE`);
  if (busyStatus !== expected) {
    fail(`${where2}: X-MICROSOFT-CDO-BUSYSTATUS is ${String(busyStatus)} with TRANSP:${String(transp)}`);
  }
}

/** Throws when `text` is not a feed every calendar app will take; see the file comment for what is checked. */
export function assertStrictIcs(text: string): void {
  checkLines(text);
  const calendar = parseCalendar(text);
  if (calendar.getFirstPropertyValue('version') !== '2.0') fail('VERSION is not 2.0');
  if (calendar.getAllProperties('prodid').length !== 1) fail('expected exactly one PRODID');
  for (const name of ['DTSTART', 'DTEND', 'DTSTAMP', 'LAST-MODIFIED']) {
    for (const value of rawValues(text, name)) {
      if (!UTC_DATE_TIME.test(value)) fail(`${name} ${JSON.stringify(value)} is not a UTC date-time`);
    }
  }
  const uids = new Map<string, number>();
  calendar.getAllSubcomponents('vevent').forEach((event, index) => checkEvent(event, index, uids));
}
