-- AlterTable
ALTER TABLE "connection" ADD COLUMN     "feed_changed_at" TIMESTAMPTZ(3);
