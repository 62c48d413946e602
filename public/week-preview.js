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

  const describe = (calendar) => {
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
    events: { url: section.dataset.feed, format: 'ics' },
    editable: false,
    selectable: false,
    allDaySlot: false,
    nowIndicator: true,
    contentHeight: 560,
    scrollTime: '08:00:00',
    slotLabelFormat: timeFormat,
    eventTimeFormat: timeFormat,
    eventDidMount: (info) => {
      const start = calendar.formatDate(info.event.start, timeFormat);
      const end = info.event.end ? calendar.formatDate(info.event.end, timeFormat) : '';
      info.el.title = `${info.event.title}, ${start}–${end}`;
    },
    eventsSet: () => describe(calendar),
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
