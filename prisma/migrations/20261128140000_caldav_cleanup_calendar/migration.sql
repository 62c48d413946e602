-- A calendar with a cleanup still under way gets no push from a new destination until the cleanup has ended
-- (issue 41): else the cleanup, holding the same UIDs and proofs, deletes the events the new destination took
-- over. Every push and every dispatch asks whether the calendar has one.
CREATE INDEX "caldav_cleanup_calendar_url_idx" ON "caldav_cleanup"("calendar_url");
