/**
 * The Slonik pool. Every query goes through `sql.type(rowSchema)`; the result-parser
 * interceptor below validates each row against that schema at run time, so a query whose
 * shape drifts from its schema fails loudly instead of leaking a wrong field to a client.
 */
import { z } from "zod";
import {
  createPool as createSlonikPool,
  SchemaValidationError,
  type DatabasePool,
  type Interceptor,
  type QueryResultRow,
} from "slonik";

import { keepConnections } from "./keepConnections.ts";

export type { DatabasePool, DatabaseTransactionConnection, CommonQueryMethods } from "slonik";
export { sql } from "slonik";

/** Row schema for statements whose result rows are not used (`select pg_notify(...)`, DML). */
export const ignoredRow = z.object({});

/** Validates rows against the schema given to `sql.type(...)`. */
export const resultParserInterceptor: Interceptor = {
  name: "result-parser",
  transformRow: (queryContext, query, row) => {
    const parser = queryContext.resultParser;
    if (!parser) return row;
    const result = parser["~standard"].validate(row);
    if (result instanceof Promise) {
      throw new TypeError("Row schemas must be synchronous.");
    }
    if (result.issues) throw new SchemaValidationError(query, row, result.issues);
    return result.value as QueryResultRow;
  },
};

/** Integers and timestamps as the service uses them: ids as numbers, times as Date. */
const typeParsers = [
  {
    name: "int8",
    parse: (value: string) => {
      const n = Number(value);
      if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${value} is outside the safe integer range`);
      return n;
    },
  },
  { name: "numeric", parse: (value: string) => Number(value) },
  { name: "timestamptz", parse: (value: string) => new Date(value) },
  { name: "timestamp", parse: (value: string) => new Date(`${value}Z`) },
  { name: "date", parse: (value: string) => value },
];

export interface PoolOptions {
  maxPoolSize?: number;
  /** Statement timeout in ms (default 60 s). */
  statementTimeout?: number;
}

/** Creates the process's Slonik pool for `url`. */
export async function createPool(url: string, options: PoolOptions = {}): Promise<DatabasePool> {
  const pool = await createSlonikPool(url, {
    interceptors: [resultParserInterceptor],
    typeParsers,
    maxPoolSize: options.maxPoolSize ?? 10,
    statementTimeout: options.statementTimeout ?? 60_000,
    idleTimeout: 30_000,
    connectionTimeout: 10_000,
    captureStackTrace: false,
    // Connections never carry session state between checkouts (no SET outside a
    // transaction, no LISTEN on pool connections), so the default `DISCARD ALL` round trip
    // on every release would only cost latency.
    resetConnection: async () => {},
  });
  return keepConnections(pool);
}
