// Everything slotfeed has at rest, as text: every table of the database (each row cast to its text form, the
// way `SELECT * FROM t` prints it, so a bytea shows as \x…hex and JSON as JSON) including _prisma_migrations,
// and every Redis key under the installation's prefix, of every type, key names included.
import type { RedisClient } from '../../../src/lib/redis-connection.js';
import pg from 'pg';

/** table name → all rows as text, one per line. */
export async function dumpDatabase(sql: pg.Pool): Promise<Map<string, string>> {
  const tables = await sql.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const dump = new Map<string, string>();
  for (const { table_name: table } of tables.rows) {
    const rows = await sql.query<{ row: string }>(
      `SELECT t::text AS row FROM ${pg.escapeIdentifier(table)} t`,
    );
    dump.set(`table ${table}`, rows.rows.map((r) => r.row).join('\n'));
  }
  return dump;
}

export interface RedisDump {
  /** key → its type and contents as text (binary values read as latin1, so every byte survives). */
  entries: Map<string, string>;
  types: Map<string, string>;
}

const text = (value: Buffer | string) => (typeof value === 'string' ? value : value.toString('latin1'));

async function contentsOf(redis: RedisClient, key: string, type: string): Promise<string> {
  switch (type) {
    case 'string':
      return text((await redis.getBuffer(key)) ?? '');
    case 'hash':
      return Object.entries(await redis.hgetallBuffer(key))
        .map(([field, value]) => `${field}=${text(value)}`)
        .join('\n');
    case 'list':
      return (await redis.lrangeBuffer(key, 0, -1)).map(text).join('\n');
    case 'set':
      return (await redis.smembersBuffer(key)).map(text).join('\n');
    case 'zset':
      return (await redis.zrangeBuffer(key, '0', '-1', 'WITHSCORES')).map(text).join('\n');
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      throw new Error(`no reader for Redis type ${type} (key ${key})`);
  }
}

export async function dumpRedis(redis: RedisClient, prefix: string): Promise<RedisDump> {
  const entries = new Map<string, string>();
  const types = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === 'none') continue; // expired between SCAN and TYPE
      types.set(key, type);
      entries.set(`redis ${key}`, `${key}\n${await contentsOf(redis, key, type)}`);
    }
    cursor = next;
  } while (cursor !== '0');
  return { entries, types };
}
