// The feed row's JSON form (src/store/feed-row-json.ts) lists its columns by hand beside Prisma's Feed: a column
// added to the schema and not to the JSON would reach a push's resolve as undefined. These tests hold the two
// together: the JSON names every Feed field but the token hash, and a row read through it decodes to what Prisma
// reads of the same row, every column set.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Prisma } from '../../src/generated/prisma/client.js';
import { FEED_ROW_JSON, feedRowOf, type FeedRowJson } from '../../src/store/feed-row-json.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('feed_row_json');
});
afterAll(async () => {
  await db?.drop();
});

const readThroughJson = async (id: string): Promise<FeedRowJson> => {
  const [row] = await db.prisma.$queryRaw<{ feed: FeedRowJson }[]>`
    SELECT ${FEED_ROW_JSON} AS "feed" FROM "feed" f WHERE f."id" = ${id}::uuid`;
  return row!.feed;
};

describe('the feed row as JSON', () => {
  it('names every column of Feed but the token hash', async () => {
    const connectionId = randomUUID();
    await db.prisma.connection.create({ data: { id: connectionId, upstreamUserId: `user-${connectionId}` } });
    const feed = await db.prisma.feed.create({
      data: { connectionId, tokenHash: randomBytes(32) },
    });
    const fields = Object.keys(Prisma.FeedScalarFieldEnum).filter((name) => name !== 'tokenHash');
    expect(Object.keys(await readThroughJson(feed.id)).sort()).toEqual(fields.sort());
  });

  it('decodes to what Prisma reads of the same row, with every column set that can be', async () => {
    const connectionId = randomUUID();
    await db.prisma.connection.create({ data: { id: connectionId, upstreamUserId: `user-${connectionId}` } });
    const created = await db.prisma.feed.create({
      data: {
        connectionId,
        upstreamEventId: 'evt-30min',
        label: 'Mornings',
        tokenHash: randomBytes(32),
        tokenSealed: 'sealed-token',
        options: { view: 'slots', days: 14, summary: 'Open' },
        createdAt: new Date('2026-03-29T00:59:59.123Z'),
        revokedAt: new Date('2026-10-25T01:00:00.456Z'),
      },
    });
    // The triggers stamp these on updates; set them afterwards so that the row holds the values written here.
    await db.prisma.$executeRaw`
      UPDATE "feed" SET "inputs_changed_at" = '2026-06-01T12:00:00.789Z', "label_changed_at" = '2026-06-02T08:30:00.001Z'
       WHERE "id" = ${created.id}::uuid`;
    const { tokenHash: _tokenHash, ...expected } = await db.prisma.feed.findUniqueOrThrow({
      where: { id: created.id },
    });
    // A feed has one owner, so teamId is the one column left null.
    const unset = Object.entries(expected).flatMap(([name, value]) => (value === null ? [name] : []));
    expect(unset).toEqual(['teamId']);
    expect(feedRowOf(await readThroughJson(created.id))).toEqual(expected);
  });
});
