-- CreateEnum
CREATE TYPE "connection_status" AS ENUM ('active', 'needs_reauth', 'disabled');

-- CreateEnum
CREATE TYPE "sync_outcome" AS ENUM ('succeeded', 'failed');

-- CreateTable
CREATE TABLE "connection" (
    "id" UUID NOT NULL,
    "upstream_user_id" TEXT NOT NULL,
    "email" TEXT,
    "display_name" TEXT,
    "timezone" TEXT,
    "status" "connection_status" NOT NULL DEFAULT 'active',
    "access_token_sealed" TEXT,
    "refresh_token_sealed" TEXT,
    "access_expires_at" TIMESTAMPTZ(3),
    "scope" TEXT,
    "feed_version" INTEGER NOT NULL DEFAULT 0,
    "next_sync_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_sync_at" TIMESTAMPTZ(3),
    "last_sync_outcome" "sync_outcome",
    "last_sync_error" TEXT,
    "last_good_sync_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sync_run" (
    "id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "job_id" TEXT,
    "attempt" INTEGER NOT NULL DEFAULT 1,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "outcome" "sync_outcome" NOT NULL,
    "error_code" TEXT,
    "error_message" TEXT,
    "retry_at" TIMESTAMPTZ(3),
    "upstream_calls" INTEGER NOT NULL DEFAULT 0,
    "calls_by_endpoint" JSONB NOT NULL DEFAULT '{}',
    "slots_opened" INTEGER NOT NULL DEFAULT 0,
    "slots_closed" INTEGER NOT NULL DEFAULT 0,
    "event_types_changed" INTEGER NOT NULL DEFAULT 0,
    "overviews_changed" INTEGER NOT NULL DEFAULT 0,
    "profile_changed" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "sync_run_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_type" (
    "id" BIGSERIAL NOT NULL,
    "connection_id" UUID NOT NULL,
    "upstream_event_id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "duration_minutes" INTEGER NOT NULL,
    "enabled" BOOLEAN NOT NULL,
    "url" TEXT,
    "color" TEXT,
    "content_hash" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "valid_from" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "valid_to" TIMESTAMPTZ(3),

    CONSTRAINT "event_type_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "profile" (
    "id" BIGSERIAL NOT NULL,
    "connection_id" UUID NOT NULL,
    "content_hash" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "valid_from" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "valid_to" TIMESTAMPTZ(3),

    CONSTRAINT "profile_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "overview" (
    "id" BIGSERIAL NOT NULL,
    "connection_id" UUID NOT NULL,
    "upstream_event_id" TEXT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "valid_from" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "valid_to" TIMESTAMPTZ(3),

    CONSTRAINT "overview_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "slot" (
    "id" BIGSERIAL NOT NULL,
    "connection_id" UUID NOT NULL,
    "upstream_event_id" TEXT NOT NULL,
    "starts_at" TIMESTAMPTZ(3) NOT NULL,
    "ends_at" TIMESTAMPTZ(3) NOT NULL,
    "sequence" INTEGER NOT NULL DEFAULT 0,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "gone_at" TIMESTAMPTZ(3),

    CONSTRAINT "slot_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "feed" (
    "id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "upstream_event_id" TEXT,
    "label" TEXT,
    "token_hash" BYTEA NOT NULL,
    "options" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "feed_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "connection_upstream_user_id_key" ON "connection"("upstream_user_id");

-- CreateIndex
CREATE INDEX "connection_status_next_sync_at_idx" ON "connection"("status", "next_sync_at");

-- CreateIndex
CREATE INDEX "sync_run_connection_id_started_at_idx" ON "sync_run"("connection_id", "started_at");

-- CreateIndex
CREATE INDEX "sync_run_started_at_idx" ON "sync_run"("started_at");

-- CreateIndex
CREATE INDEX "event_type_connection_id_upstream_event_id_valid_to_idx" ON "event_type"("connection_id", "upstream_event_id", "valid_to");

-- CreateIndex
CREATE INDEX "profile_connection_id_valid_to_idx" ON "profile"("connection_id", "valid_to");

-- CreateIndex
CREATE INDEX "overview_connection_id_upstream_event_id_valid_to_idx" ON "overview"("connection_id", "upstream_event_id", "valid_to");

-- CreateIndex
CREATE INDEX "slot_connection_id_gone_at_starts_at_idx" ON "slot"("connection_id", "gone_at", "starts_at");

-- CreateIndex
CREATE INDEX "slot_connection_id_upstream_event_id_starts_at_idx" ON "slot"("connection_id", "upstream_event_id", "starts_at");

-- CreateIndex
CREATE UNIQUE INDEX "feed_token_hash_key" ON "feed"("token_hash");

-- CreateIndex
CREATE INDEX "feed_connection_id_idx" ON "feed"("connection_id");

-- AddForeignKey
ALTER TABLE "sync_run" ADD CONSTRAINT "sync_run_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "event_type" ADD CONSTRAINT "event_type_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "profile" ADD CONSTRAINT "profile_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "overview" ADD CONSTRAINT "overview_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "slot" ADD CONSTRAINT "slot_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "feed" ADD CONSTRAINT "feed_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Written by hand: what schema.prisma does not state (Prisma 7.10 can state a partial index only through the
-- `partialIndexes` preview, whose client would then treat these three fields as a unique key).
-- At most one open row per slot; closed rows are history and may repeat.
CREATE UNIQUE INDEX "slot_open_key" ON "slot"("connection_id", "upstream_event_id", "starts_at") WHERE "gone_at" IS NULL;
