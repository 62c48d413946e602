-- API keys for the JSON API (/api/v1): made by an administrator, shown once, kept as a SHA-256 only; each is
-- scoped to connections and teams by id (a scope naming one that is gone simply reads nothing).
CREATE TABLE "api_key" (
    "id" UUID NOT NULL,
    "label" TEXT NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "connection_ids" UUID[] NOT NULL,
    "team_ids" UUID[] NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "api_key_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "api_key_token_hash_key" ON "api_key"("token_hash");
