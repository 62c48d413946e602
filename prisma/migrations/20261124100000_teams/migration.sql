-- Teams: named sets of connections on this installation, whose members' free time a team feed combines.
CREATE TABLE "team" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "team_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "team_name_key" ON "team"("name");

-- A member leaves by deleting its row; deleting a connection (its owner's "delete my data") removes it too.
CREATE TABLE "team_member" (
    "team_id" UUID NOT NULL,
    "connection_id" UUID NOT NULL,
    "joined_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "team_member_pkey" PRIMARY KEY ("team_id","connection_id")
);
CREATE INDEX "team_member_connection_id_idx" ON "team_member"("connection_id");
ALTER TABLE "team_member" ADD CONSTRAINT "team_member_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "team"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "team_member" ADD CONSTRAINT "team_member_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
