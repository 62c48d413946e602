#!/usr/bin/python3
"""An independent CalDAV client for slotfeed's tests: Debian's python3-caldav, not slotfeed's code.

  caldav-readback.py list <calendar-url>
      prints the calendar's events as one JSON array on stdout, sorted by uid:
      [{"href", "uid", "summary", "dtstart", "dtend", "marker"}], dates as ISO 8601 (UTC as ...Z),
      marker the VEVENT's X-SLOTFEED-FEED value or null.
  caldav-readback.py add <calendar-url> <uid> <summary> <start> <end>
      saves an event as a person's own calendar app would (no marker), start and end as ISO 8601 UTC.

The user name and password come from CALDAV_USERNAME and CALDAV_PASSWORD (not argv, which `ps` shows).
Run with /usr/bin/python3: python3-caldav is installed for Debian's Python, not for another on PATH.
"""
import json
import os
import sys
from datetime import date, datetime, timezone

import caldav
import icalendar

MARKER = "X-SLOTFEED-FEED"


def iso(value):
    if value is None:
        return None
    moment = value.dt
    if isinstance(moment, datetime):
        if moment.tzinfo is not None:
            moment = moment.astimezone(timezone.utc)
            return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        return moment.strftime("%Y-%m-%dT%H:%M:%S")
    if isinstance(moment, date):
        return moment.isoformat()
    return str(moment)


def calendar_at(url):
    client = caldav.DAVClient(
        url=url,
        username=os.environ.get("CALDAV_USERNAME"),
        password=os.environ.get("CALDAV_PASSWORD"),
    )
    return client.calendar(url=url)


def list_events(url):
    events = []
    for event in calendar_at(url).events():
        parsed = icalendar.Calendar.from_ical(event.data)
        for vevent in parsed.walk("VEVENT"):
            marker = vevent.get(MARKER)
            events.append(
                {
                    "href": str(event.url),
                    "uid": str(vevent.get("UID")),
                    "summary": None if vevent.get("SUMMARY") is None else str(vevent.get("SUMMARY")),
                    "dtstart": iso(vevent.get("DTSTART")),
                    "dtend": iso(vevent.get("DTEND")),
                    "marker": None if marker is None else str(marker),
                }
            )
    events.sort(key=lambda e: e["uid"])
    print(json.dumps(events))


def utc(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def add_event(url, uid, summary, start, end):
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//slotfeed tests//a person's own calendar app//EN")
    calendar.add("version", "2.0")
    event = icalendar.Event()
    event.add("uid", uid)
    event.add("dtstamp", datetime.now(timezone.utc))
    event.add("dtstart", utc(start))
    event.add("dtend", utc(end))
    event.add("summary", summary)
    calendar.add_component(event)
    calendar_at(url).save_event(calendar.to_ical().decode())


def main(argv):
    if len(argv) == 3 and argv[1] == "list":
        list_events(argv[2])
    elif len(argv) == 7 and argv[1] == "add":
        add_event(*argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
