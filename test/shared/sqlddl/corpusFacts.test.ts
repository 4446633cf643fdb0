/**
 * MS-SQL and Firebird have no engine on these machines, so their corpus files are checked
 * against FACTS ASSERTED BY READING THE FILES (table counts from the corpus README, and
 * keys, types and options read off the quoted lines), not against a catalog. Each fact
 * names the file line it comes from.
 */
import t from "tap";
import { parseDdl, type ParsedSchema, type ParsedTable } from "../../../shared/sqlddl/index.ts";
import { corpusFiles, noCorpus } from "./support/corpus.ts";

const load = (dialect: "MSSQL" | "Firebird", name: string) => {
  const file = corpusFiles(dialect)?.find((f) => f.name === name);
  if (!file) throw new Error(`${name} missing from the corpus`);
  return parseDdl(file.text, dialect);
};
const table = (schema: ParsedSchema, name: string, schemaName?: string): ParsedTable => {
  const found = schema.tables.find((x) => x.table_name === name && (schemaName === undefined || x.schema_name === schemaName));
  if (!found) throw new Error(`no table ${name}`);
  return found;
};
const field = (tbl: ParsedTable, name: string) => tbl.fields.find((f) => f.field_name === name)!;
const keys = (tbl: ParsedTable, type: string) => tbl.constraints.filter((k) => k.type === type).map((k) => `${k.name ?? ""}(${k.columns.join(",")})${k.references_table ? `->${k.references_schema ? `${k.references_schema}.` : ""}${k.references_table}(${(k.references_columns ?? []).join(",")})` : ""}`);

const skip = corpusFiles("MSSQL") && corpusFiles("Firebird") ? false : noCorpus;

t.test("MS-SQL corpus (facts read from the files; no engine here)", { skip }, async (t) => {
  t.test("table counts match the corpus README", async (t) => {
    const counts: Record<string, number> = {
      "mssql/chinook.sql": 11,
      "mssql/northwind.sql": 13,
      "mssql/sakila.sql": 16,
      "mssql/adventureworks.sql": 71,
      "mssql/wide_world_importers_tables.sql": 54,
    };
    for (const [name, count] of Object.entries(counts)) {
      const result = load("MSSQL", name);
      t.equal(result.schema.tables.length, count, name);
      t.notOk(result.warnings.some((w) => w.message.startsWith("could not understand")), `${name}: every statement it models parses`);
    }
  });

  t.test("adventureworks.sql: user types, IDENTITY, computed columns, keys added by ALTER TABLE, comments", async (t) => {
    const { schema } = load("MSSQL", "mssql/adventureworks.sql");
    const person = table(schema, "Person", "Person");
    // CREATE TYPE [Name] FROM nvarchar(50) NULL; `[FirstName] [Name] NOT NULL` (line 1228)
    t.match(field(person, "FirstName"), { field_type: "nvarchar", length: 50, is_nullable: false, type_name: "Name" });
    t.match(field(person, "MiddleName"), { field_type: "nvarchar", length: 50, is_nullable: true });
    // CREATE TYPE [NameStyle] FROM bit NOT NULL; ... DEFAULT (0) (line 1226)
    t.match(field(person, "NameStyle"), { field_type: "bit", is_nullable: false, default_value: "0" });
    // ALTER TABLE [Person].[Person] WITH CHECK ADD CONSTRAINT [PK_Person_BusinessEntityID] PRIMARY KEY CLUSTERED (line 2004)
    t.same(keys(person, "primary_key"), ["PK_Person_BusinessEntityID(BusinessEntityID)"]);
    // ALTER TABLE [Person].[Person] ADD CONSTRAINT [FK_Person_BusinessEntity_BusinessEntityID] (line 2816)
    t.ok(keys(person, "foreign_key").includes("FK_Person_BusinessEntity_BusinessEntityID(BusinessEntityID)->Person.BusinessEntity(BusinessEntityID)"));
    // sp_addextendedproperty N'MS_Description', N'Human beings involved with AdventureWorks: ...' (line 5286)
    t.equal(person.comment, "Human beings involved with AdventureWorks: employees, customer contacts, and vendor contacts.");
    const header = table(schema, "SalesOrderHeader", "Sales");
    // [SalesOrderID] [int] IDENTITY (1, 1) NOT FOR REPLICATION NOT NULL (line 1507)
    t.match(field(header, "SalesOrderID"), { field_type: "int", is_auto_increment: true, is_primary_key: true, is_nullable: false });
    // [TotalDue] AS ISNULL([SubTotal] + [TaxAmt] + [Freight], 0) (line 1529)
    t.equal(field(header, "TotalDue").computed, "ISNULL([SubTotal] + [TaxAmt] + [Freight], 0)");
    // [DatabaseLogID] [int] IDENTITY (1, 1) NOT NULL; [TSQL] [nvarchar](max); [DatabaseUser] [sysname]
    const log = table(schema, "DatabaseLog", "dbo");
    t.match(field(log, "DatabaseLogID"), { is_auto_increment: true });
    t.match(field(log, "TSQL"), { field_type: "nvarchar", length: -1 });
    t.match(field(log, "DatabaseUser"), { field_type: "nvarchar", length: 128, type_name: "sysname" });
    // CREATE UNIQUE INDEX [AK_Product_Name] ON [Production].[Product]([Name]) (line 2428)
    t.ok(keys(table(schema, "Product", "Production"), "unique").includes("AK_Product_Name(Name)"));
  });

  t.test("wide_world_importers_tables.sql: sequence defaults, temporal tables, unique constraints", async (t) => {
    const { schema } = load("MSSQL", "mssql/wide_world_importers_tables.sql");
    const cities = table(schema, "Cities", "Application");
    // [CityID] INT CONSTRAINT [...] DEFAULT (NEXT VALUE FOR [Sequences].[CityID]) NOT NULL (line 6)
    t.match(field(cities, "CityID"), { is_auto_increment: true, default_value: "NEXT VALUE FOR [Sequences].[CityID]", is_primary_key: true });
    // [ValidFrom] DATETIME2 (7) GENERATED ALWAYS AS ROW START NOT NULL (line 12)
    t.match(field(cities, "ValidFrom"), { field_type: "datetime2", length: 7, is_nullable: false });
    t.match(field(cities, "Location"), { field_type: "geography" });
    // CONSTRAINT [UQ_Application_Countries_CountryName] UNIQUE NONCLUSTERED ([CountryName] ASC)
    t.ok(keys(table(schema, "Countries", "Application"), "unique").includes("UQ_Application_Countries_CountryName(CountryName)"));
    t.equal(cities.comment, "Cities that are part of any address (including geographic location)");
  });

  t.test("northwind.sql and sakila.sql: quoted names, IDENTITY, defaults added by ALTER ... FOR", async (t) => {
    const north = load("MSSQL", "mssql/northwind.sql").schema;
    // CREATE TABLE "Order Details" (... CONSTRAINT "PK_Order_Details" PRIMARY KEY CLUSTERED ("OrderID", "ProductID")
    t.same(keys(table(north, "Order Details"), "primary_key"), ["PK_Order_Details(OrderID,ProductID)"]);
    t.match(field(table(north, "Employees"), "EmployeeID"), { field_type: "int", is_auto_increment: true });
    const sakila = load("MSSQL", "mssql/sakila.sql").schema;
    // ALTER TABLE actor ADD CONSTRAINT [DF_actor_last_update] DEFAULT (getdate()) FOR last_update
    t.match(field(table(sakila, "actor"), "last_update"), { default_value: "getdate()", is_nullable: false });
    t.match(field(table(sakila, "actor"), "actor_id"), { is_auto_increment: true, is_primary_key: true });
  });
});

t.test("Firebird corpus (facts read from employee.sql; no engine here)", { skip }, async (t) => {
  const { schema, warnings } = load("Firebird", "firebird/employee.sql");
  t.equal(schema.tables.length, 10, "10 CREATE TABLE statements (corpus README)");
  t.notOk(warnings.some((w) => w.message.startsWith("could not understand")));
  const employee = table(schema, "employee");
  // CREATE DOMAIN empno AS SMALLINT; emp_no EMPNO NOT NULL; trigger set_emp_no: new.emp_no = gen_id(emp_no_gen, 1)
  t.match(field(employee, "emp_no"), { field_type: "smallint", type_name: "EMPNO", is_nullable: false, is_auto_increment: true, is_primary_key: true });
  // CREATE DOMAIN salary AS NUMERIC(10,2) DEFAULT 0 CHECK (VALUE > 0)
  t.match(field(employee, "salary"), { field_type: "numeric", length: 10, scale: 2, default_value: "0" });
  // full_name COMPUTED BY (last_name || ', ' || first_name)
  t.equal(field(employee, "full_name").computed, "last_name || ', ' || first_name");
  // FOREIGN KEY (job_code, job_grade, job_country) REFERENCES job (job_code, job_grade, job_country)
  t.ok(keys(employee, "foreign_key").includes("(job_code,job_grade,job_country)->job(job_code,job_grade,job_country)"));
  // CREATE DOMAIN prodtype AS VARCHAR(12) DEFAULT 'software' NOT NULL ...; product PRODTYPE
  t.match(field(table(schema, "project"), "product"), { field_type: "varchar", length: 12, is_nullable: false, default_value: "'software'" });
  // CREATE UNIQUE INDEX prodtypex ON project (product, proj_name)
  t.ok(keys(table(schema, "project"), "unique").includes("prodtypex(product,proj_name)"));
  // ALTER TABLE department ADD FOREIGN KEY (mngr_no) REFERENCES employee (emp_no)
  t.ok(keys(table(schema, "department"), "foreign_key").includes("(mngr_no)->employee(emp_no)"));
  // job_requirement BLOB(400,1) is a text blob; language_req VARCHAR(15) [5] is an array
  t.match(field(table(schema, "job"), "job_requirement"), { field_type: "blob sub_type text" });
  t.match(field(table(schema, "job"), "language_req"), { field_type: "varchar", length: 15, array_dimensions: 1 });
  // cust_no CUSTNO NOT NULL; trigger set_cust_no: new.cust_no = gen_id(cust_no_gen, 1)
  t.match(field(table(schema, "customer"), "cust_no"), { field_type: "integer", is_auto_increment: true });
  t.same(schema.sequences?.map((s) => s.name), ["emp_no_gen", "cust_no_gen"]);
});
