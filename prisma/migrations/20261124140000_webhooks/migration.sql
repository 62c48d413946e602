-- Webhooks: endpoints registered for a connection or a team, and every delivery (an outbox: a sync's commit
-- writes the deliveries its changes call for in the same transaction, so an event is never lost between a
-- commit and a queue, and a sync that changes nothing writes none). src/webhooks/ delivers them.
CREATE TABLE "webhook_endpoint" (
    "id" UUID NOT NULL,
    "connection_id" UUID,
    "team_id" UUID,
    "url" TEXT NOT NULL,
    -- The signing secret, sealed by the token vault (bound to the endpoint's id); shown once, at creation.
    "secret_sealed" TEXT NOT NULL,
    "events" TEXT[] NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- Since when every attempt has failed (null after a success): past a day the endpoint is disabled.
    "failing_since" TIMESTAMPTZ(3),
    "disabled_at" TIMESTAMPTZ(3),
    "disabled_reason" TEXT,
    CONSTRAINT "webhook_endpoint_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_endpoint_belongs_to_one" CHECK (("connection_id" IS NULL) <> ("team_id" IS NULL))
);
CREATE INDEX "webhook_endpoint_connection_id_idx" ON "webhook_endpoint"("connection_id");
CREATE INDEX "webhook_endpoint_team_id_idx" ON "webhook_endpoint"("team_id");
ALTER TABLE "webhook_endpoint" ADD CONSTRAINT "webhook_endpoint_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "webhook_endpoint" ADD CONSTRAINT "webhook_endpoint_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "webhook_delivery" (
    -- Also the message id (webhook-id: msg_<id without dashes>): the same on every attempt, for idempotency.
    "id" UUID NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "event_type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    -- Handed to the delivery queue (null: the dispatcher has yet to).
    "enqueued_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_attempt_at" TIMESTAMPTZ(3),
    "last_status" INTEGER,
    "last_latency_ms" INTEGER,
    "last_error" TEXT,
    "delivered_at" TIMESTAMPTZ(3),
    "given_up_at" TIMESTAMPTZ(3),
    CONSTRAINT "webhook_delivery_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_delivery_endpoint_id_created_at_idx" ON "webhook_delivery"("endpoint_id", "created_at");
CREATE INDEX "webhook_delivery_enqueued_at_created_at_idx" ON "webhook_delivery"("enqueued_at", "created_at");
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;
