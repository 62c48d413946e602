// The one place a PrismaClient is constructed (the composition root calls it; tests through test/support/db).
// Prisma 7 talks to Postgres through a driver adapter: node-postgres via @prisma/adapter-pg, no native engine.
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.js';

export function createPrismaClient(databaseUrl: string): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
}
