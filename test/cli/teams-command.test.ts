import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCapturedCli } from '../support/cli-run.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let env: Record<string, string>;
const ada = randomUUID();
const grace = randomUUID();

beforeAll(async () => {
  db = await createTestDatabase('teams_cli');
  for (const [id, name] of [
    [ada, 'Ada'],
    [grace, 'Grace'],
  ] as const) {
    await db.prisma.connection.create({
      data: { id, upstreamUserId: `usr_${name}`, email: `${name}@example.test`, displayName: name },
    });
  }
  env = { DATABASE_URL: db.url, LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  await db.drop();
});

const slotfeed = (...args: string[]) => runCapturedCli(env, args);

describe('slotfeed teams', () => {
  it('creates a team with members, adds, lists, removes and deletes', async () => {
    const created = await slotfeed('teams', 'create', 'Support', ada);
    expect(created).toMatchObject({ code: 0 });
    expect(created.stdout).toContain('team Support');
    expect(created.stdout).toContain('1 member: Ada');

    expect((await slotfeed('teams', 'add', 'Support', grace)).stdout).toContain('2 members: Ada, Grace');
    const listed = await slotfeed('teams', 'list', '--format', 'json');
    const [team] = JSON.parse(listed.stdout).teams;
    expect(team.members.map((m: { connectionId: string }) => m.connectionId)).toEqual([ada, grace]);
    expect(listed.stdout).not.toContain('@example.test');

    expect((await slotfeed('teams', 'remove', team.id, ada)).stdout).toContain('1 member: Grace');
    expect((await slotfeed('teams', 'remove', team.id, ada)).stdout).toContain('Nothing changed');
    expect((await slotfeed('teams', 'delete', 'Support')).stdout).toContain('Team Support deleted');
    expect((await slotfeed('teams', 'list')).stdout).toContain('No teams yet');
  });

  it('says what is wrong with a duplicate name, an unknown team or a malformed connection id', async () => {
    await slotfeed('teams', 'create', 'Sales');
    const duplicate = await slotfeed('teams', 'create', 'Sales');
    expect(duplicate).toMatchObject({ code: 1 });
    expect(duplicate.stderr).toContain('a team named "Sales" exists already');
    const unknown = await slotfeed('teams', 'add', 'Nobody', ada);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no team named or numbered "Nobody"');
    const malformed = await slotfeed('teams', 'add', 'Sales', 'not-an-id');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('not a connection id');
    const missing = await slotfeed('teams', 'add', 'Sales', randomUUID());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no connection with id');
  });

  it('makes a team feed, prints its URL once and lists it as the team’s', async () => {
    await slotfeed('teams', 'create', 'Ops', ada, grace);
    const made = await runCapturedCli({ ...env, PUBLIC_BASE_URL: 'https://slotfeed.example' }, [
      'teams',
      'feed',
      'Ops',
      '--mode',
      'all',
      '--minimum',
      '45',
      '--days',
      '14',
    ]);
    expect(made).toMatchObject({ code: 0 });
    expect(made.stdout).toContain('team: everyone free, at least 45 min; 14 days');
    const url = /https:\/\/slotfeed\.example\/feeds\/([A-Za-z0-9_-]{43})\.ics/.exec(made.stdout);
    expect(url).not.toBeNull();
    const [feed] = await db.prisma.feed.findMany({ where: { team: { name: 'Ops' } } });
    expect(feed).toMatchObject({
      connectionId: null,
      options: { view: 'free', mode: 'all', minimum: 45, days: 14 },
    });
    const listed = await slotfeed('feeds', 'list');
    expect(listed.stdout).toContain(`team ${feed!.teamId}`);

    const bad = await slotfeed('teams', 'feed', 'Ops', '--mode', 'any', '--minimum', '45');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--minimum cannot be used with --mode any');
    expect((await slotfeed('teams', 'feed', 'Ops', '--mode', 'most')).code).toBe(2);
    expect((await slotfeed('teams', 'feed', 'Nobody')).stderr).toContain(
      'no team named or numbered "Nobody"',
    );
  });
});
