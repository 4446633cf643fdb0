/**
 * The layout write's batch rows (shared/forms/elementColumns.ts): the statement reads each
 * column at its position in `allColumns`, so the hand-written row must follow that order.
 */
import t from "tap";
import { allColumns, batchRow } from "../../../shared/forms/elementColumns.ts";

t.test("a batch row is the id, then every column's value in allColumns order, without trailing nulls", async (t) => {
  // A distinct value per column, so any column out of place shows.
  const values = Object.fromEntries(allColumns.map((column, i) => [column, `${column}:${i}`])) as Parameters<typeof batchRow>[1];
  t.strictSame(batchRow(7, values), [7, ...allColumns.map((column) => values[column])]);
  const tail = { ...values, link_table: null, link_field: null, link_display_field: null };
  t.strictSame(batchRow(null, tail), [null, ...allColumns.slice(0, -3).map((column) => values[column])], "trailing nulls left out");
  const inner = { ...values, x_position: null, link_display_field: null };
  t.strictSame(batchRow(3, inner), [3, ...allColumns.slice(0, -1).map((column) => inner[column])], "nulls before the last value kept");
  t.strictSame(batchRow(null, Object.fromEntries(allColumns.map((c) => [c, null])) as typeof values), [], "all null: empty");
});
