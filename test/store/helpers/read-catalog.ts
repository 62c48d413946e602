// The parts of a migrated database that schema.prisma describes, read from the Postgres catalog in the same
// shape expected-schema.ts computes, sorted so two catalogs compare with toEqual.
import type pg from 'pg';

export interface CatalogColumn {
  table: string;
  column: string;
  /** information_schema data_type, or the enum's type name for enum columns. */
  type: string;
  /** Fractional-seconds precision of time types, else null. */
  precision: number | null;
  nullable: boolean;
  default: string | null;
}

export interface CatalogIndex {
  table: string;
  name: string;
  /** The key's columns, in order. */
  columns: string[];
  /** Columns the index holds beside its key (INCLUDE), in order; none for most. */
  included: string[];
  unique: boolean;
  primary: boolean;
  /** The WHERE of a partial index, as Postgres prints it; null for a full index. */
  predicate: string | null;
}

export interface CatalogForeignKey {
  table: string;
  name: string;
  columns: string[];
  referencedTable: string;
  referencedColumns: string[];
  onDelete: string;
  onUpdate: string;
}

export interface DatabaseCatalog {
  enums: { name: string; values: string[] }[];
  tables: string[];
  columns: CatalogColumn[];
  indexes: CatalogIndex[];
  foreignKeys: CatalogForeignKey[];
}

const by =
  <T>(...keys: ((item: T) => string)[]) =>
  (a: T, b: T) => {
    for (const key of keys) {
      const order = key(a).localeCompare(key(b));
      if (order !== 0) return order;
    }
    return 0;
  };

export function sortCatalog(catalog: DatabaseCatalog): DatabaseCatalog {
  return {
    enums: [...catalog.enums].sort(by((e) => e.name)),
    tables: [...catalog.tables].sort(),
    columns: [...catalog.columns].sort(
      by(
        (c) => c.table,
        (c) => c.column,
      ),
    ),
    indexes: [...catalog.indexes].sort(
      by(
        (i) => i.table,
        (i) => i.name,
      ),
    ),
    foreignKeys: [...catalog.foreignKeys].sort(
      by(
        (f) => f.table,
        (f) => f.name,
      ),
    ),
  };
}

const ACTIONS: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};

/** The public schema's user objects, leaving out `_prisma_migrations` (the runner's, not the schema's). */
export async function readCatalog(sql: pg.Pool): Promise<DatabaseCatalog> {
  const enums = await sql.query<{ name: string; values: string[] }>(
    `SELECT t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS values
     FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname = 'public' GROUP BY t.typname`,
  );
  const tables = await sql.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'`,
  );
  const columns = await sql.query<{
    table: string;
    column: string;
    data_type: string;
    udt_name: string;
    precision: number | null;
    nullable: string;
    default: string | null;
  }>(
    `SELECT table_name AS table, column_name AS column, data_type, udt_name, datetime_precision AS precision,
            is_nullable AS nullable, column_default AS default
     FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
  );
  const indexes = await sql.query<CatalogIndex>(
    `SELECT t.relname AS table, i.relname AS name,
            array(SELECT a.attname::text FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                  WHERE k.ord <= x.indnkeyatts ORDER BY k.ord) AS columns,
            array(SELECT a.attname::text FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                  WHERE k.ord > x.indnkeyatts ORDER BY k.ord) AS included,
            x.indisunique AS unique, x.indisprimary AS primary, pg_get_expr(x.indpred, x.indrelid) AS predicate
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = 'public' AND t.relname <> '_prisma_migrations'`,
  );
  const foreignKeys = await sql.query<{
    table: string;
    name: string;
    columns: string[];
    referenced_table: string;
    referenced_columns: string[];
    on_delete: string;
    on_update: string;
  }>(
    `SELECT t.relname AS table, c.conname AS name,
            array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
            r.relname AS referenced_table,
            array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.ord)
              AS referenced_columns,
            c.confdeltype AS on_delete, c.confupdtype AS on_update
     FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE c.contype = 'f' AND n.nspname = 'public'`,
  );

  return sortCatalog({
    enums: enums.rows,
    tables: tables.rows.map((r) => r.table_name),
    columns: columns.rows.map((c) => ({
      table: c.table,
      column: c.column,
      type: c.data_type === 'USER-DEFINED' ? c.udt_name : c.data_type,
      precision: c.data_type.startsWith('time') ? c.precision : null,
      nullable: c.nullable === 'YES',
      default: c.default,
    })),
    indexes: indexes.rows,
    foreignKeys: foreignKeys.rows.map((f) => ({
      table: f.table,
      name: f.name,
      columns: f.columns,
      referencedTable: f.referenced_table,
      referencedColumns: f.referenced_columns,
      onDelete: ACTIONS[f.on_delete] ?? f.on_delete,
      onUpdate: ACTIONS[f.on_update] ?? f.on_update,
    })),
  });
}
