// Draws the owner's week preview (src/web/owner/week-preview.ts) with FullCalendar, from the feed URL itself.
// Seven days on wide screens, three on a phone, from today in the account's zone (the feed's window starts
// today: days before it would be empty). The status line says how many events the shown days have, or why the
// feed could not be read; data-ready and data-events are set for tests and screenshots.
(() => {
  const section = document.getElementById('week-preview');
  if (!section || !window.FullCalendar) return;
  const status = section.querySelector('[data-preview-status]');
  const narrowScreen = window.matchMedia('(max-width: 640px)');
  const viewFor = () => (narrowScreen.matches ? 'timeGridThreeDay' : 'timeGridSevenDay');
  const timeFormat = { hour: '2-digit', minute: '2-digit', hour12: false };

  const DAY_STARTS = 8;
  const DAY_ENDS = 18;
  const hour = (h) => `${String(h).padStart(2, '0')}:00:00`;
  // Hours in the calendar's zone (the luxon plugin's conversion), so the range fits what is drawn. A block
  // past midnight is drawn as one piece per day (22:00–24:00, then 00:00–02:00 the next day): every piece's
  // start and end must be in the range, or the grid cuts it.
  const hoursSpanned = (calendar) => {
    let first = DAY_STARTS;
    let last = DAY_ENDS;
    for (const event of calendar.getEvents()) {
      const end = FullCalendar.Luxon3.toLuxonDateTime(event.end ?? event.start, calendar);
      let start = FullCalendar.Luxon3.toLuxonDateTime(event.start, calendar);
      do {
        const midnight = start.startOf('day').plus({ days: 1 });
        first = Math.min(first, start.hour);
        last = Math.max(last, end < midnight ? Math.ceil(end.hour + end.minute / 60) : 24);
        start = midnight;
      } while (start < end);
    }
    return [first, last];
  };

  // Each piece says when its whole event runs: FullCalendar's own label gives the piece's times, so the first
  // half of a block from 22:00 to 02:00 would read 22:00 - 00:00.
  const labelled = (event) => {
    const time = document.createElement('div');
    time.className = 'fc-event-time';
    const end = event.end ? `–${calendar.formatDate(event.end, timeFormat)}` : '';
    time.textContent = `${calendar.formatDate(event.start, timeFormat)}${end}`;
    const title = document.createElement('div');
    title.className = 'fc-event-title';
    title.textContent = event.title;
    const frame = document.createElement('div');
    frame.className = 'fc-event-main-frame';
    frame.append(time, title);
    return { domNodes: [frame] };
  };

  // Past this many hours (a block past midnight shows the whole day), a row is an hour, not half of one, so the
  // grid stays about a screen tall.
  const HOURLY_ROWS_PAST = 16;
  let hourlyRows = false;

  const describe = (calendar) => {
    const [first, last] = hoursSpanned(calendar);
    if (calendar.getOption('slotMinTime') !== hour(first)) calendar.setOption('slotMinTime', hour(first));
    if (calendar.getOption('slotMaxTime') !== hour(last)) calendar.setOption('slotMaxTime', hour(last));
    const hourly = last - first > HOURLY_ROWS_PAST;
    if (hourly !== hourlyRows) {
      hourlyRows = hourly;
      calendar.setOption('slotDuration', hourly ? '01:00:00' : '00:30:00');
    }
    const view = calendar.view;
    const shown = calendar
      .getEvents()
      .filter((e) => e.start < view.activeEnd && (e.end ?? e.start) > view.activeStart);
    section.dataset.events = String(shown.length);
    section.dataset.ready = 'true';
    status.textContent =
      shown.length === 0
        ? 'Nothing in the feed for these days.'
        : `${shown.length} event${shown.length === 1 ? '' : 's'} in the feed for these days.`;
  };

  const calendar = new FullCalendar.Calendar(section.querySelector('.week-preview-calendar'), {
    initialView: viewFor(),
    // From today, not from the start of its week: a whole week would align to Sunday (or Monday).
    views: {
      timeGridSevenDay: { type: 'timeGrid', duration: { days: 7 }, dateAlignment: 'day', buttonText: 'week' },
      timeGridThreeDay: {
        type: 'timeGrid',
        duration: { days: 3 },
        dateAlignment: 'day',
        buttonText: '3 days',
        // Without the year: "Dec 31, 2026 – Jan 2, 2027" pushed "Today" under the arrows and took two lines on a phone.
        titleFormat: { month: 'short', day: 'numeric' },
      },
    },
    timeZone: section.dataset.timeZone || 'local',
    // The server's clock, not the browser's: the feed's window starts from it.
    now: section.dataset.now,
    initialDate: section.dataset.now,
    headerToolbar: { left: 'prev,next today', center: 'title', right: '' },
    // Text, not FullCalendar's icon font: its icons have no text alternative for screen readers.
    buttonIcons: false,
    buttonText: { prev: '‹', next: '›', today: 'Today' },
    buttonHints: { prev: 'Previous $0', next: 'Next $0', today: 'Back to this $0' },
    // The feed allows caching for half a sync interval (calendar apps poll it); the page must show the bytes
    // as they are now, so the browser is asked past its cache with a query the feed route ignores.
    events: { url: `${section.dataset.feed}?at=${Date.now()}`, format: 'ics' },
    editable: false,
    selectable: false,
    allDaySlot: false,
    nowIndicator: true,
    // The whole day range at once, no box scrolling inside the page: from the earliest hour any day's piece of
    // an event starts in to the latest one ends in (at least 08:00 to 18:00; a block past midnight makes it the
    // whole day), so nothing the feed holds is out of sight.
    height: 'auto',
    slotMinTime: hour(DAY_STARTS),
    slotMaxTime: hour(DAY_ENDS),
    slotLabelFormat: timeFormat,
    eventTimeFormat: timeFormat,
    eventContent: (info) => labelled(info.event),
    eventDidMount: (info) => {
      const start = calendar.formatDate(info.event.start, timeFormat);
      const end = info.event.end ? calendar.formatDate(info.event.end, timeFormat) : '';
      info.el.title = `${info.event.title}, ${start}–${end}`;
    },
    // Ready once the feed has been fetched and parsed (eventsSet also fires, empty, before that).
    loading: (isLoading) => {
      if (!isLoading) describe(calendar);
    },
    eventsSet: () => {
      if (section.dataset.ready) describe(calendar);
    },

    datesSet: () => {
      if (section.dataset.ready) describe(calendar);
    },
    eventSourceFailure: () => {
      section.dataset.ready = 'true';
      status.textContent = 'The feed could not be read just now; try reloading the page.';
    },
    windowResize: () => {
      if (calendar.view.type !== viewFor()) calendar.changeView(viewFor());
    },
  });
  calendar.render();
})();
