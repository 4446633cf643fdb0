/**
 * Finding tables of a ParsedSchema by reference the way the parser matched them (an
 * unqualified name finds a table in the default schema, names compare case-insensitively
 * except in PostgreSQL), and ordering tables so that referenced tables come first.
 */
import type { Dialect, ParsedConstraint, ParsedSchema, ParsedTable } from "./types.ts";

const DEFAULT_SCHEMAS = new Set(["public", "dbo", "main"]);

/** Whether a schema name is the engine's default one (or absent). */
export function isDefaultSchema(schema: string | null | undefined): boolean {
  return !schema || DEFAULT_SCHEMAS.has(schema.toLowerCase());
}

/** A stable key for a table across dialects: `schema.name` lower-cased, default schema dropped. */
export function tableKey(schema: string | null | undefined, name: string, dialect?: Dialect): string {
  const fold = (s: string) => (dialect === "PostgreSQL" ? s : s.toLowerCase());
  return isDefaultSchema(schema) || dialect === "MySQL" ? fold(name) : `${fold(schema!)}.${fold(name)}`;
}

/** Table lookups and dependency order over one ParsedSchema. */
export class SchemaIndex {
  readonly schema: ParsedSchema;
  private readonly byName = new Map<string, ParsedTable[]>();

  constructor(schema: ParsedSchema) {
    this.schema = schema;
    for (const table of schema.tables) {
      const k = this.fold(table.table_name);
      const others = this.byName.get(k);
      if (others) others.push(table);
      else this.byName.set(k, [table]);
    }
  }

  /** The table a foreign key (or any reference) points at, if the schema has it. */
  find(schema: string | null | undefined, name: string): ParsedTable | undefined {
    const candidates = this.byName.get(this.fold(name)) ?? [];
    if (candidates.length <= 1) return candidates[0];
    const wanted = isDefaultSchema(schema) ? null : this.fold(schema!);
    return candidates.find((t) => (isDefaultSchema(t.schema_name) ? null : this.fold(t.schema_name!)) === wanted) ?? candidates[0];
  }

  referenced(k: ParsedConstraint): ParsedTable | undefined {
    return k.references_table ? this.find(k.references_schema, k.references_table) : undefined;
  }

  /** Tables with every referenced table before the tables that reference it (cycles keep file order). */
  dependencyOrder(): ParsedTable[] {
    const state = new Map<ParsedTable, "visiting" | "done">();
    const order: ParsedTable[] = [];
    const depends = (table: ParsedTable) =>
      table.constraints.flatMap((k) => {
        const target = k.type === "foreign_key" ? this.referenced(k) : undefined;
        return target && target !== table ? [target] : [];
      });
    for (const root of this.schema.tables) {
      if (state.has(root)) continue;
      // an explicit stack: a long chain of references must not exhaust the call stack
      const stack = [{ table: root, deps: depends(root), next: 0 }];
      state.set(root, "visiting");
      while (stack.length > 0) {
        const top = stack[stack.length - 1]!;
        const dep = top.deps[top.next++];
        if (dep) {
          if (!state.has(dep)) {
            state.set(dep, "visiting");
            stack.push({ table: dep, deps: depends(dep), next: 0 });
          }
          continue;
        }
        state.set(top.table, "done");
        order.push(top.table);
        stack.pop();
      }
    }
    return order;
  }

  private fold(name: string): string {
    return this.schema.dialect === "PostgreSQL" ? name : name.toLowerCase();
  }
}
