-- A feed's token sealed by the token vault (AES-256-GCM, bound to the feed's id), so its owner can see the URL
-- again on their page. The SHA-256 in token_hash stays the lookup key; feeds made before this have none, and
-- get one when rotated.
ALTER TABLE "feed" ADD COLUMN "token_sealed" TEXT;
