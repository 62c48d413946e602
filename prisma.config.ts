// Prisma CLI configuration. The CLI is used here only for `prisma generate`: migrations are applied by
// `slotfeed migrate` (src/store/migrations), because `prisma migrate` needs a native engine download.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    // generate needs no database; the placeholder keeps `prisma generate` working without DATABASE_URL.
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/slotfeed',
  },
});
