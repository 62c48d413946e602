-- Share links (issue 37): a link to a page of one feed's free time, for people who will never subscribe to
-- anything. Its secret is kept as its SHA-256 (the lookup key) and, when TOKEN_ENCRYPTION_KEY is set, sealed
-- by the token vault bound to the link's id, so the owner's page can show the address again; never plain.
CREATE TABLE "share_link" (
    "id" UUID NOT NULL,
    "feed_id" UUID NOT NULL,
    "label" TEXT NOT NULL,
    "secret_hash" BYTEA NOT NULL,
    "secret_sealed" TEXT,
    -- null: never expires. After it, the page and its feed answer 410.
    "expires_at" TIMESTAMPTZ(3),
    -- The origins that may frame the embeddable page (CSP frame-ancestors); none: it may not be framed.
    "frame_ancestors" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    -- Written at most once a minute per link, so a busy page costs no writes.
    "last_opened_at" TIMESTAMPTZ(3),
    CONSTRAINT "share_link_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "share_link_secret_hash_key" ON "share_link"("secret_hash");
CREATE INDEX "share_link_feed_id_idx" ON "share_link"("feed_id");
ALTER TABLE "share_link" ADD CONSTRAINT "share_link_feed_id_fkey" FOREIGN KEY ("feed_id") REFERENCES "feed"("id") ON DELETE CASCADE ON UPDATE CASCADE;
