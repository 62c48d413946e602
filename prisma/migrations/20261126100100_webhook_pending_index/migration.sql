-- The deliveries still to deliver, in the order the dispatcher and the lost-job sweep walk them
-- (src/webhooks/webhook-queue.ts, every WEBHOOK_DISPATCH_INTERVAL_MS): a few rows among the many delivered ones,
-- which nothing prunes. Partial, so it holds only those few; not in schema.prisma (see
-- test/store/schema-matches-migrations.test.ts).
CREATE INDEX "webhook_delivery_pending_idx" ON "webhook_delivery"("created_at", "id")
  WHERE "delivered_at" IS NULL AND "given_up_at" IS NULL;
