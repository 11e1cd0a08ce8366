/**
 * Prisma's WASM schema engine, driven through the pg driver adapter, so migrations apply and
 * get created without the native engine that Prisma's CLI downloads (impossible offline).
 *
 * The engine is used with shims for bugs of @prisma/adapter-pg 7.10 (see
 * ../shared/notes/offline-stack.md, section 2):
 *  1. pg "char" columns (OID 18) are not deserialisable → reported as text and re-typed Character;
 *  2. PG 17+ NOT NULL constraint rows (contype 'n') panic the describer → filtered out;
 *  3. executeScript splits on ';' (breaks $$ bodies, not atomic) → the whole script is sent as
 *     one simple query, which PostgreSQL runs as one implicit transaction;
 *  4. connectToShadowDb drops the shadow database before closing its pool → our own shadow
 *     factories (see shadow-database.ts).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import pg from 'pg';
import {
  ColumnTypeEnum,
  bindMigrationAwareSqlAdapterFactory,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQuery,
  type SqlResultSet,
  type Transaction,
} from '@prisma/driver-adapter-utils';
import * as bg from '@prisma/schema-engine-wasm/schema_engine_bg';
import type { SchemaEngine } from '@prisma/schema-engine-wasm/schema_engine_bg';

export type { SchemaEngine };

const CHAR_OID = 18;
const TEXT_OID = 25;
const CHAR_COLUMNS = Symbol.for('wp.charColumns');

interface FieldLike {
  dataTypeID: number;
}
interface ResultLike {
  fields?: FieldLike[];
  rows?: unknown[];
}

function markCharColumns<T>(result: T): T {
  for (const r of (Array.isArray(result) ? result : [result]) as ResultLike[]) {
    const indexes: number[] = [];
    (r?.fields ?? []).forEach((f, i) => {
      if (f.dataTypeID === CHAR_OID) {
        f.dataTypeID = TEXT_OID;
        indexes.push(i);
      }
    });
    if (indexes.length && Array.isArray(r.rows)) Object.defineProperty(r.rows, CHAR_COLUMNS, { value: indexes });
  }
  return result;
}

/** A pg Client that reports "char" columns as text (shim 1); pass it as the Pool's `Client`. */
export class CharAwareClient extends pg.Client {
  override query(...args: any[]): any {
    const last = args.at(-1);
    if (typeof last === 'function') {
      args[args.length - 1] = (err: unknown, res: unknown) => last(err, err ? res : markCharColumns(res));
    }
    const out = (super.query as any)(...args);
    return out && typeof out.then === 'function' ? out.then(markCharColumns) : out;
  }
}

const DESCRIBE_CONSTRAINTS = "contype NOT IN ('p', 'u', 'f')";

interface ScriptRunner {
  underlyingDriver(): { query(sql: string): Promise<unknown> };
  onError(err: unknown): never;
}

function patchQueryable<T extends SqlDriverAdapter | Transaction>(adapter: T): T {
  return new Proxy(adapter, {
    get(target, prop) {
      // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
      const value = Reflect.get(target, prop, target) as Function;
      if (prop === 'queryRaw') {
        return async (query: SqlQuery): Promise<SqlResultSet> => {
          const sql = query.sql.includes(DESCRIBE_CONSTRAINTS) ? query.sql.replace(DESCRIBE_CONSTRAINTS, "contype NOT IN ('p', 'u', 'f', 'n')") : query.sql;
          const result = (await value.call(target, { ...query, sql })) as SqlResultSet;
          const rows = result.rows as unknown as Record<symbol, number[] | undefined>;
          for (const i of rows[CHAR_COLUMNS] ?? []) result.columnTypes[i] = ColumnTypeEnum.Character;
          return result;
        };
      }
      if (prop === 'executeScript') {
        return async (script: string) => {
          const runner = target as unknown as ScriptRunner;
          try {
            await runner.underlyingDriver().query(script);
          } catch (err) {
            runner.onError(err); // converts the pg error into the adapter's error shape, which the engine reports
          }
        };
      }
      if (prop === 'startTransaction') {
        return async (...a: unknown[]) => patchQueryable(await value.apply(target, a));
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Applies the shims to a factory; `shadow` replaces connectToShadowDb (shim 4). */
export function patchFactory(factory: SqlMigrationAwareDriverAdapterFactory, shadow?: () => Promise<SqlDriverAdapter>): SqlMigrationAwareDriverAdapterFactory {
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => patchQueryable(await factory.connect()),
    connectToShadowDb: async () => patchQueryable(await (shadow ? shadow() : factory.connectToShadowDb())),
  };
}

let wasmReady: Promise<void> | undefined;
let lastPanic: string | undefined;

function loadWasm(): Promise<void> {
  wasmReady ??= (async () => {
    const g = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(m: string): void } };
    g.PRISMA_WASM_PANIC_REGISTRY ??= { set_message: (m: string) => void (lastPanic = m) };
    const require = createRequire(import.meta.url);
    const dir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    const bytes = await readFile(path.join(dir, 'schema_engine_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bg as never });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports as { __wbindgen_start?: () => void }).__wbindgen_start?.();
  })();
  return wasmReady;
}

/** Opens the engine over a (patched) adapter factory. Call `engine.free()` when done. */
export async function openSchemaEngine(schema: { path: string; content: string }, factory: SqlMigrationAwareDriverAdapterFactory): Promise<SchemaEngine> {
  await loadWasm();
  return bg.SchemaEngine.new({ datamodels: [[schema.path, schema.content]] }, () => undefined, bindMigrationAwareSqlAdapterFactory(factory));
}

/** Engine errors arrive as plain objects or strings; this makes them readable. */
export function engineError(err: unknown): Error {
  if (err instanceof Error) return err;
  const text = typeof err === 'string' ? err : JSON.stringify(err);
  return new Error(lastPanic ? `${text} (engine panic: ${lastPanic})` : text);
}
