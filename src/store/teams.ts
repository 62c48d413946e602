// Teams: named sets of connections on this installation. A team feed combines its members' free time
// (src/feeds/team-availability.ts); this module only keeps who belongs to which team. Members are named by
// display name wherever a team is shown to others, never by e-mail (their address is theirs to share).
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import { ConnectionNotFoundError } from './connections.js';

export interface TeamMemberRecord {
  connectionId: string;
  displayName: string | null;
  status: string;
  joinedAt: Date;
}

export interface TeamRecord {
  id: string;
  name: string;
  createdAt: Date;
  members: TeamMemberRecord[];
}

export class TeamNotFoundError extends Error {
  constructor(readonly team: string) {
    super(`no team named or numbered "${team}" (see \`slotfeed teams list\`)`);
    this.name = 'TeamNotFoundError';
  }
}

export class TeamNameTakenError extends Error {
  constructor(readonly teamName: string) {
    super(`a team named "${teamName}" exists already`);
    this.name = 'TeamNameTakenError';
  }
}

export class InvalidTeamNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTeamNameError';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const TEAM_NAME_MAX_LENGTH = 100;

/** Trimmed, one line, 1–100 characters: a team's name is shown in calendar apps as part of its feed's name. */
export function validTeamName(name: string): string {
  const trimmed = name.trim().replace(/\s+/g, ' ');
  if (trimmed === '') throw new InvalidTeamNameError('a team needs a name');
  if (trimmed.length > TEAM_NAME_MAX_LENGTH) {
    throw new InvalidTeamNameError(`a team name has at most ${TEAM_NAME_MAX_LENGTH} characters`);
  }
  return trimmed;
}

const TEAM_WITH_MEMBERS = {
  members: {
    // By name, as people look for one another; members added in one statement share their joinedAt.
    orderBy: [{ connection: { displayName: 'asc' } }, { connectionId: 'asc' }],
    include: { connection: { select: { displayName: true, status: true } } },
  },
} as const satisfies Prisma.TeamInclude;

type TeamRow = Prisma.TeamGetPayload<{ include: typeof TEAM_WITH_MEMBERS }>;

function toRecord(row: TeamRow): TeamRecord {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.createdAt,
    members: row.members.map((m) => ({
      connectionId: m.connectionId,
      displayName: m.connection.displayName,
      status: m.connection.status,
      joinedAt: m.joinedAt,
    })),
  };
}

export interface TeamStore {
  create(name: string): Promise<TeamRecord>;
  list(): Promise<TeamRecord[]>;
  /** By id or by exact name. Throws TeamNotFoundError. */
  find(idOrName: string): Promise<TeamRecord>;
  /** Adds connections; ones already members are left as they are. Throws ConnectionNotFoundError. */
  addMembers(teamId: string, connectionIds: string[]): Promise<TeamRecord>;
  /** True when the connection was a member. A member leaving its team uses this too. */
  removeMember(teamId: string, connectionId: string): Promise<boolean>;
  delete(teamId: string): Promise<void>;
  /** The teams a connection belongs to, for its owner's page. */
  teamsOf(connectionId: string): Promise<TeamRecord[]>;
}

export function createTeamStore(prisma: PrismaClient): TeamStore {
  const byIdOrName = (idOrName: string): Prisma.TeamWhereUniqueInput =>
    UUID.test(idOrName) ? { id: idOrName } : { name: idOrName.trim() };

  async function find(idOrName: string): Promise<TeamRecord> {
    const row = await prisma.team.findUnique({ where: byIdOrName(idOrName), include: TEAM_WITH_MEMBERS });
    if (!row) throw new TeamNotFoundError(idOrName);
    return toRecord(row);
  }

  return {
    async create(name) {
      const valid = validTeamName(name);
      try {
        const row = await prisma.team.create({ data: { name: valid }, include: TEAM_WITH_MEMBERS });
        return toRecord(row);
      } catch (error: unknown) {
        if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
          throw new TeamNameTakenError(valid);
        }
        throw error;
      }
    },

    async list() {
      const rows = await prisma.team.findMany({
        include: TEAM_WITH_MEMBERS,
        orderBy: [{ name: 'asc' }],
      });
      return rows.map(toRecord);
    },

    find,

    async addMembers(teamId, connectionIds) {
      const team = await find(teamId);
      const unique = [...new Set(connectionIds)];
      const invalid = unique.find((id) => !UUID.test(id));
      if (invalid !== undefined) throw new ConnectionNotFoundError(invalid);
      const existing = await prisma.connection.findMany({
        where: { id: { in: unique } },
        select: { id: true },
      });
      const missing = unique.find((id) => !existing.some((c) => c.id === id));
      if (missing !== undefined) throw new ConnectionNotFoundError(missing);
      await prisma.teamMember.createMany({
        data: unique.map((connectionId) => ({ teamId: team.id, connectionId })),
        skipDuplicates: true,
      });
      return find(team.id);
    },

    async removeMember(teamId, connectionId) {
      if (!UUID.test(teamId) || !UUID.test(connectionId)) return false;
      const { count } = await prisma.teamMember.deleteMany({ where: { teamId, connectionId } });
      return count > 0;
    },

    async delete(teamId) {
      const team = await find(teamId);
      await prisma.team.delete({ where: { id: team.id } });
    },

    async teamsOf(connectionId) {
      if (!UUID.test(connectionId)) return [];
      const rows = await prisma.team.findMany({
        where: { members: { some: { connectionId } } },
        include: TEAM_WITH_MEMBERS,
        orderBy: [{ name: 'asc' }],
      });
      return rows.map(toRecord);
    },
  };
}
