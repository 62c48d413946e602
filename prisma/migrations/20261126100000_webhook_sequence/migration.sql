-- Webhook ordering (src/store/webhook-outbox.ts): deliveries are retried independently, so an older event can
-- reach a receiver after a newer one. webhook_endpoint.last_sequence counts the events written for an endpoint;
-- each payload carries its number (`sequence`: 1, 2, 3, … per endpoint, in the order the commits that wrote
-- them committed), so a receiver can order them and see one still missing. Existing endpoints count from 0.
ALTER TABLE "webhook_endpoint" ADD COLUMN "last_sequence" BIGINT NOT NULL DEFAULT 0;
