/**
 * The formats of the MS-SQL and Firebird tools (SSMS "Generate Scripts", `isql -x`), which
 * have no engine here: FACTS ASSERTED FROM THE FIXTURE TEXT (fixtures/toolFormats.ts), not
 * from a catalog. Every statement must be understood except routines and grants.
 */
import t from "tap";
import { parseDdl, type ParsedTable } from "../../../shared/sqlddl/index.ts";
import { isqlExtractSql, ssmsScriptSql } from "./fixtures/toolFormats.ts";

const field = (table: ParsedTable | undefined, name: string) => table?.fields.find((f) => f.field_name === name);
const keys = (table: ParsedTable | undefined) => (table?.constraints ?? []).map((k) => `${k.type} ${k.name ?? "-"} (${k.columns.join(",")})${k.references_table ? ` -> ${k.references_table}(${(k.references_columns ?? []).join(",")}) ${k.on_delete ?? ""}` : ""}`.trim());

t.test("SSMS Generate Scripts", async (t) => {
  const { schema, warnings, statements } = parseDdl(ssmsScriptSql, "MSSQL");
  t.same(warnings, [], "USE, SET, GO, CHECK CONSTRAINT and sp_addextendedproperty all understood");
  t.same(statements.skipped, 0);
  const customers = schema.tables.find((x) => x.table_name === "Customers");
  const orders = schema.tables.find((x) => x.table_name === "Orders");
  t.equal(orders?.schema_name, "sales");
  // [Phone] [dbo].[Phone] NULL, with CREATE TYPE [dbo].[Phone] FROM [nvarchar](24) NULL
  t.match(field(customers, "Phone"), { field_type: "nvarchar", length: 24, type_name: "dbo.Phone" });
  t.match(field(customers, "Notes"), { field_type: "nvarchar", length: -1 }, "(max) is length -1");
  // CONSTRAINT [PK_Customers] PRIMARY KEY CLUSTERED (...) WITH (PAD_INDEX = OFF, ...) ON [PRIMARY]
  t.same(keys(customers), ["primary_key PK_Customers (CustomerID)", "unique UQ_Customers_CompanyName (CompanyName)"]);
  t.match(field(orders, "OrderID"), { field_type: "int", is_auto_increment: true, is_nullable: false, is_primary_key: true });
  t.match(field(orders, "OrderDate"), { field_type: "datetime2", length: 3, default_value: "sysdatetime()" }, "ADD DEFAULT (…) FOR [OrderDate]");
  t.match(field(orders, "Freight"), { default_value: "0" }, "ADD CONSTRAINT [DF_…] DEFAULT ((0)) FOR [Freight]");
  t.equal(field(orders, "Total")?.computed, "[Freight]*(2)");
  t.same(keys(orders), ["primary_key PK_Orders (OrderID)", "foreign_key FK_Orders_Customers (CustomerID) -> Customers(CustomerID) SET NULL"]);
  t.same(orders?.checks?.map((c) => c.name), ["CK_Orders_Freight"]);
  t.same(orders?.indexes?.map((i) => i.name), ["IX_Orders_CustomerID"]);
  t.equal(orders?.comment, "Orders placed by customers");
});

t.test("Firebird isql -x extract", async (t) => {
  const { schema, warnings } = parseDdl(isqlExtractSql, "Firebird");
  t.same(warnings.map((w) => w.message), ["skipped CREATE PROCEDURE GET_ORDERS (not a table definition)", "skipped GRANT SELECT (not a table definition)"]);
  const customer = schema.tables.find((x) => x.table_name === "CUSTOMER");
  const orders = schema.tables.find((x) => x.table_name === "ORDERS");
  t.equal(schema.tables.length, 3);
  // CUST_NO CUSTNO NOT NULL, CUSTNO = INTEGER; the SET_CUST_NO trigger fills it from CUST_NO_GEN
  t.match(field(customer, "CUST_NO"), { field_type: "integer", type_name: "CUSTNO", is_auto_increment: true, is_primary_key: true });
  // ACTIVE FLAG, with CREATE DOMAIN FLAG AS BOOLEAN DEFAULT FALSE NOT NULL
  t.match(field(customer, "ACTIVE"), { field_type: "boolean", is_nullable: false, default_value: "FALSE" });
  t.match(field(customer, "NOTES"), { field_type: "blob sub_type text" });
  t.match(field(orders, "ORDER_NO"), { is_auto_increment: true, identity: "by_default" });
  t.equal(field(orders, "TOTAL_WITH_TAX")?.computed, "total * 1.2");
  // RDB$PRIMARY1 and INTEG_nn are names Firebird made up: they are not kept
  t.same(keys(customer), ["primary_key - (CUST_NO)", "foreign_key - (COUNTRY) -> COUNTRY(COUNTRY)", "unique UQ_CUSTOMER_NAME (CUSTOMER)"]);
  t.same(keys(orders), ["primary_key PK_ORDERS (ORDER_NO)", "foreign_key FK_ORDERS_CUSTOMER (CUST_NO) -> CUSTOMER(CUST_NO) CASCADE"]);
  t.same(schema.sequences?.map((s) => [s.name, s.start]), [["CUST_NO_GEN", null], ["ORDER_NO_GEN", 100]]);
});

t.test("a T-SQL batch with neither GO nor semicolons: each statement ends where the next begins", async (t) => {
  const batch = [
    "SET NOCOUNT ON",
    "IF OBJECT_ID(N'dbo.a') IS NULL CREATE TABLE dbo.a (id INT NOT NULL PRIMARY KEY) ELSE PRINT 'a exists'",
    "PRINT 'between'",
    "IF OBJECT_ID(N'dbo.b') IS NULL BEGIN CREATE TABLE dbo.b (id INT NOT NULL) CREATE TABLE dbo.b2 (id INT NOT NULL) END ELSE BEGIN PRINT 'b exists' SELECT CASE WHEN 1 = 1 THEN 1 END END",
    ...Array.from({ length: 40 }, (_, i) => `IF OBJECT_ID(N'dbo.c${i}') IS NULL CREATE TABLE dbo.c${i} (id INT NOT NULL)`),
    "IF 1 = 0 CREATE TABLE dbo.guarded (id INT) ELSE CREATE TABLE dbo.alternative (id INT)",
    "CREATE TABLE dbo.last (id INT NOT NULL)",
  ].join("\n");
  const { schema, warnings } = parseDdl(batch, "MSSQL");
  const names = schema.tables.map((x) => x.table_name);
  t.same(warnings, [], "nothing skipped");
  t.same(names.slice(0, 3), ["a", "b", "b2"], "an IF's statement or BEGIN … END block is modelled; ELSE PRINT and SET take nothing after them");
  t.equal(names.filter((n) => n.startsWith("c")).length, 40, "forty IFs in a row each guard their own statement (not nested into one another)");
  t.ok(names.includes("guarded") && !names.includes("alternative"), "the guarded statement is modelled, its ELSE branch is not");
  t.equal(names.at(-1), "last", "the batch is read to its end");
});
