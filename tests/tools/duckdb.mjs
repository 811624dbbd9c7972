// duckdb.mjs - runs SQL (standard input: statements separated by ';')
// in an in-memory DuckDB through the npm package @duckdb/node-api, in
// the current directory; prints the last statement's rows as TSV (NULL
// as \N) on standard output. For tests/cli/fleet.sh.
//   node tests/tools/duckdb.mjs <query.sql
// Exit 1 on an SQL error; 3 when the package is not installed (then the
// message says: npm ci --prefix tests, or make deps).
import { readFileSync } from "node:fs";

let api;
try {
  api = await import("@duckdb/node-api");
} catch (e) {
  console.error("duckdb.mjs: the npm package @duckdb/node-api is missing: " +
                "run npm ci --prefix tests (or make deps); " + e.message);
  process.exit(3);
}
const sql = readFileSync(0, "utf8");
try {
  const db = await api.DuckDBInstance.create(":memory:");
  const con = await db.connect();
  const stmts = await con.extractStatements(sql);
  let reader = null;
  for (let i = 0; i < stmts.count; i++) {
    const prepared = await stmts.prepare(i);
    reader = await prepared.runAndReadAll();
  }
  if (reader) {
    const rows = reader.getRowsJson();
    for (const r of rows)
      console.log(r.map((v) => (v === null ? "\\N" : String(v))).join("\t"));
  }
} catch (e) {
  console.error("duckdb.mjs: " + e.message);
  process.exit(1);
}
