import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConnectionNotFoundError } from '../../src/store/connections.js';
import {
  createTeamStore,
  InvalidTeamNameError,
  TeamNameTakenError,
  TeamNotFoundError,
  type TeamStore,
} from '../../src/store/teams.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let teams: TeamStore;

async function newConnection(displayName: string): Promise<string> {
  const id = randomUUID();
  await db.prisma.connection.create({
    data: { id, upstreamUserId: `user-${id}`, displayName, email: `${displayName}@example.test` },
  });
  return id;
}

beforeAll(async () => {
  db = await createTestDatabase('team_store');
  teams = createTeamStore(db.prisma);
});
afterAll(async () => {
  await db?.drop();
});

describe('teams', () => {
  it('creates a team, adds members once each, finds it by id or name, and lists members by display name', async () => {
    const ada = await newConnection('Ada');
    const grace = await newConnection('Grace');
    const team = await teams.create('  Support   rota ');
    expect(team.name).toBe('Support rota');
    await teams.addMembers(team.id, [grace, ada, grace]);
    const again = await teams.addMembers(team.id, [grace]);
    expect(again.members.map((m) => m.displayName)).toEqual(['Ada', 'Grace']);
    expect((await teams.find('Support rota')).id).toBe(team.id);
    expect((await teams.find(team.id)).members).toHaveLength(2);
    expect(JSON.stringify(await teams.list())).not.toContain('@example.test');
  });

  it('refuses a duplicate or empty name, an unknown team and an unknown connection, changing nothing', async () => {
    await teams.create('Sales');
    await expect(teams.create('Sales')).rejects.toBeInstanceOf(TeamNameTakenError);
    await expect(teams.create('   ')).rejects.toBeInstanceOf(InvalidTeamNameError);
    await expect(teams.create('x'.repeat(101))).rejects.toBeInstanceOf(InvalidTeamNameError);
    await expect(teams.find('No such team')).rejects.toBeInstanceOf(TeamNotFoundError);
    const sales = await teams.find('Sales');
    const ada = await newConnection('Ada2');
    await expect(teams.addMembers(sales.id, [ada, randomUUID()])).rejects.toBeInstanceOf(
      ConnectionNotFoundError,
    );
    expect((await teams.find('Sales')).members).toEqual([]);
  });

  it('lets a member leave, lists a connection’s teams, and drops the membership when the connection is deleted', async () => {
    const lin = await newConnection('Lin');
    const one = await teams.create('One');
    const two = await teams.create('Two');
    await teams.addMembers(one.id, [lin]);
    await teams.addMembers(two.id, [lin]);
    expect((await teams.teamsOf(lin)).map((t) => t.name)).toEqual(['One', 'Two']);
    expect(await teams.removeMember(one.id, lin)).toBe(true);
    expect(await teams.removeMember(one.id, lin)).toBe(false);
    expect((await teams.teamsOf(lin)).map((t) => t.name)).toEqual(['Two']);
    await db.prisma.connection.delete({ where: { id: lin } });
    expect((await teams.find('Two')).members).toEqual([]);
    await teams.delete(two.id);
    await expect(teams.find('Two')).rejects.toBeInstanceOf(TeamNotFoundError);
  });
});
