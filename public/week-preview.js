// Draws the owner's week preview (src/web/week-preview.ts) with FullCalendar, from the feed URL itself.
// A week on wide screens, three days on a phone. The status line says how many events the shown days have,
// or why the feed could not be read; data-ready and data-events are set for tests and screenshots.
(() => {
  const section = document.getElementById('week-preview');
  if (!section || !window.FullCalendar) return;
  const status = section.querySelector('[data-preview-status]');
  const narrowScreen = window.matchMedia('(max-width: 640px)');
  const viewFor = () => (narrowScreen.matches ? 'timeGridThreeDay' : 'timeGridWeek');
  const timeFormat = { hour: '2-digit', minute: '2-digit', hour12: false };

  const DAY_STARTS = 8;
  const DAY_ENDS = 18;
  const hour = (h) => `${String(h).padStart(2, '0')}:00:00`;
  // Hours in the calendar's zone (the luxon plugin's conversion), so the range fits what is drawn.
  const hoursSpanned = (calendar) => {
    let first = DAY_STARTS;
    let last = DAY_ENDS;
    for (const event of calendar.getEvents()) {
      const start = FullCalendar.Luxon3.toLuxonDateTime(event.start, calendar);
      const end = FullCalendar.Luxon3.toLuxonDateTime(event.end ?? event.start, calendar);
      first = Math.min(first, start.hour);
      last = Math.max(last, end.hasSame(start, 'day') ? Math.ceil(end.hour + end.minute / 60) : 24);
    }
    return [first, last];
  };

  const describe = (calendar) => {
    const [first, last] = hoursSpanned(calendar);
    if (calendar.getOption('slotMinTime') !== hour(first)) calendar.setOption('slotMinTime', hour(first));
    if (calendar.getOption('slotMaxTime') !== hour(last)) calendar.setOption('slotMaxTime', hour(last));
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
    views: { timeGridThreeDay: { type: 'timeGrid', duration: { days: 3 }, buttonText: '3 days' } },
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
    // The whole day range at once, no box scrolling inside the page: from the earliest hour the feed has an
    // event in to the latest (at least 08:00 to 18:00), so nothing the feed holds is out of sight.
    height: 'auto',
    slotMinTime: hour(DAY_STARTS),
    slotMaxTime: hour(DAY_ENDS),
    slotLabelFormat: timeFormat,
    eventTimeFormat: timeFormat,
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
