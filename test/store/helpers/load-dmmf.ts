// Prisma's own reading of schema.prisma (its DMMF), so schema tests derive what they expect from the schema
// file rather than from a copied list. `@prisma/internals` (getDMMF) is not installed, but the Prisma CLI ships
// the same Rust code as WebAssembly (build/prisma_schema_build_bg.wasm); its JS glue is bundled inside the CLI,
// so this file binds the four imports it needs itself (wasm-bindgen ABI). When a Prisma upgrade changes that
// ABI, the error below says so.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: 'scalar' | 'enum' | 'object' | 'unsupported';
  type: string;
  isRequired: boolean;
  isList: boolean;
  isId: boolean;
  isUpdatedAt: boolean;
  nativeType?: [string, string[]] | null;
  default?: unknown;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}

export interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}

export interface DmmfEnum {
  name: string;
  dbName?: string | null;
  values: { name: string; dbName: string | null }[];
}

export interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  dbName?: string | null;
  fields: { name: string }[];
}

export interface Datamodel {
  models: DmmfModel[];
  enums: DmmfEnum[];
  indexes: DmmfIndex[];
}

// The project's lib (ES2023, no DOM) has no WebAssembly types; these are the few parts used here.
interface WasmTable {
  grow(delta: number): number;
  get(index: number): unknown;
  set(index: number, value: unknown): void;
}

interface WebAssemblyApi {
  Module: { new (bytes: Uint8Array): object; imports(module: object): { module: string; name: string }[] };
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: unknown };
}

const { WebAssembly } = globalThis as unknown as { WebAssembly: WebAssemblyApi };

interface SchemaWasm {
  memory: { buffer: ArrayBuffer };
  __wbindgen_externrefs: WasmTable;
  __wbindgen_start(): void;
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(ptr: number, size: number, align: number): void;
  get_dmmf(ptr: number, len: number): [number, number, number, number];
}

function wasmPath(): string {
  const prismaPackage = createRequire(import.meta.url).resolve('prisma/package.json');
  return path.join(path.dirname(prismaPackage), 'build', 'prisma_schema_build_bg.wasm');
}

async function instantiate(): Promise<SchemaWasm> {
  const module = new WebAssembly.Module(await readFile(wasmPath()));
  // The imports run during instantiation and later, so they reach the exports through this holder.
  const instance: { exports?: SchemaWasm } = {};
  const message = (ptr: number, len: number) => text(instance.exports!, ptr, len);
  const glue: Record<string, (...args: number[]) => unknown> = {};
  for (const { name } of WebAssembly.Module.imports(module)) {
    if (name.startsWith('__wbg_Error_')) glue[name] = (ptr, len) => new Error(message(ptr, len));
    else if (name.startsWith('__wbg_set_message_')) glue[name] = () => undefined;
    else if (name.includes('wbindgen_throw'))
      glue[name] = (ptr, len) => {
        throw new Error(message(ptr, len));
      };
    else if (name === '__wbindgen_init_externref_table')
      glue[name] = () => {
        const table = instance.exports!.__wbindgen_externrefs;
        const offset = table.grow(4);
        table.set(0, undefined);
        [undefined, null, true, false].forEach((value, i) => table.set(offset + i, value));
      };
    else
      throw new Error(
        `prisma_schema_build_bg.wasm wants an unknown import ${name}: update ${import.meta.url}`,
      );
  }
  const exports = new WebAssembly.Instance(module, { __wbindgen_placeholder__: glue }).exports as SchemaWasm;
  instance.exports = exports;
  exports.__wbindgen_start();
  return exports;
}

/** The datamodel part of Prisma's DMMF for one schema file. */
export async function loadDatamodel(schemaPath: string): Promise<Datamodel> {
  const wasm = await instantiate();
  const input = new TextEncoder().encode(
    JSON.stringify({ prismaSchema: [[schemaPath, await readFile(schemaPath, 'utf8')]], noColor: true }),
  );
  const ptr = wasm.__wbindgen_malloc(input.length, 1) >>> 0;
  new Uint8Array(wasm.memory.buffer).set(input, ptr);
  const [outPtr, outLen, errRef, failed] = wasm.get_dmmf(ptr, input.length);
  if (failed) throw wasm.__wbindgen_externrefs.get(errRef) as Error;
  const json = text(wasm, outPtr, outLen);
  wasm.__wbindgen_free(outPtr, outLen, 1);
  return (JSON.parse(json) as { datamodel: Datamodel }).datamodel;
}

function text(wasm: SchemaWasm, ptr: number, len: number): string {
  return new TextDecoder().decode(new Uint8Array(wasm.memory.buffer, ptr >>> 0, len));
}
