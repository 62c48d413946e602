// What each report is, in one sentence or two: the CLI's `report <name> --help` and the admin's report pages both
// say it, from here, so the two cannot drift apart (the CLI's sync-health once left out staleness).
import type { ReportName } from './report-query.js';

export const REPORT_DESCRIPTIONS: Record<ReportName, string> = {
  availability:
    'Free slots and free minutes per event type and day, now or as of a past instant, reconstructed from slot ' +
    'history.',
  bookings:
    'Bookings inferred from the slots each sync saw taken, per day or week: booked minutes, lead times, the ' +
    'busiest weekdays and hours, and the slots that opened.',
  utilization:
    'For past days, per connection: the share of the time offered for booking that was booked. Time booked, then ' +
    'offered again and still open when it came (a booking cancelled for good), counts no booked minutes.',
  'sync-health':
    'Per connection: runs, success rate, median and p95 duration, upstream calls per run, how stale changes may ' +
    'have been by how far ahead they start, the last error, and whether it needs re-authorisation.',
};
