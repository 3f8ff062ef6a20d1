// Reads informe's Parquet and Arrow exports with readers that are not
// written in Go, for TestTypedReaders: DuckDB (@duckdb/node-api) and
// hyparquet read the Parquet file, apache-arrow each Arrow IPC stream.
//
// Usage: node typed_readers.mjs SPEC.json, where SPEC holds
//   {"modules": node_modules folder, "columns": [{"name", "kind"}],
//    "parquet": file, "arrow": [files]}
// It prints {"duckdb": {"rows", "count", "sum", "status"}, "hyparquet":
// {"rows"}, "arrow": [{"rows"}]}: every row as an array of values in
// column order, each null or a string: an integer or a decimal times 100
// in base 10, a date as days since 1970-01-01, a timestamp as microseconds
// since 1970-01-01 00:00:00 (UTC for timestamptz), a text as itself.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const require = createRequire(spec.modules + "/");
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const cols = spec.columns;
const q = (name) => '"' + name.replaceAll('"', '""') + '"';
const out = {};

// DuckDB: normalized in SQL.
{
  const { DuckDBInstance } = await load("@duckdb/node-api");
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  const file = "'" + spec.parquet.replaceAll("'", "''") + "'";
  const exprs = cols.map((c) => {
    const n = q(c.name);
    switch (c.kind) {
      case "decimal": return `CAST(CAST(${n} * 100 AS BIGINT) AS VARCHAR)`;
      case "date": return `CAST(${n} - DATE '1970-01-01' AS VARCHAR)`;
      case "timestamp": case "timestamptz": return `CAST(epoch_us(${n}) AS VARCHAR)`;
      default: return `CAST(${n} AS VARCHAR)`;
    }
  });
  // The file's own order: DuckDB keeps it for a single-threaded scan.
  await con.run("SET threads = 1");
  const rows = await con.runAndReadAll(`SELECT ${exprs.join(", ")} FROM read_parquet(${file})`);
  out.duckdb = { rows: rows.getRows() };
  // The report's sums and counts, when its columns are there.
  if (cols.some((c) => c.name === "costo_servicio") && cols.some((c) => c.name === "task_status")) {
  const agg = await con.runAndReadAll(`SELECT count(*)::VARCHAR, CAST(sum(costo_servicio) AS VARCHAR) FROM read_parquet(${file})`);
  [[out.duckdb.count, out.duckdb.sum]] = agg.getRows();
  const st = await con.runAndReadAll(`SELECT task_status, count(*)::VARCHAR FROM read_parquet(${file}) GROUP BY 1`);
  out.duckdb.status = st.getRows();
  }
}

// hyparquet: its parsers keep dates and timestamps exact.
{
  const { parquetReadObjects } = await load("hyparquet");
  const buf = readFileSync(spec.parquet);
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const objs = await parquetReadObjects({
    file,
    parsers: {
      dateFromDays: (d) => String(d),
      timestampFromMicroseconds: (us) => String(us),
    },
  });
  out.hyparquet = {
    rows: objs.map((o) => cols.map((c) => {
      const v = o[c.name];
      if (v === null || v === undefined) return null;
      if (c.kind === "decimal") return String(Math.round(v * 100));
      return String(v);
    })),
  };
}

// apache-arrow: each stream's batches, in order. Dates, timestamps and
// decimals are read from the vectors' own buffers: get() gives
// milliseconds as a float.
{
  const arrow = await load("apache-arrow");
  out.arrow = spec.arrow.map((path) => {
    const table = arrow.tableFromIPC(readFileSync(path));
    const fields = table.schema.fields.map((f) => f.name);
    if (fields.join() !== cols.map((c) => c.name).join()) throw new Error("fields " + fields.join());
    const rows = [];
    for (const batch of table.batches) {
      const data = cols.map((c) => batch.getChild(c.name).data[0]);
      for (let i = 0; i < batch.numRows; i++) {
        rows.push(cols.map((c, j) => {
          const d = data[j];
          if (d.getValid && !d.getValid(i)) return null;
          const k = d.offset + i;
          switch (c.kind) {
            case "decimal": {
              // Decimal128: four 32-bit words, least significant first;
              // informe's decimals fit in the first two.
              const w = d.values;
              return BigInt.asIntN(64, BigInt(w[4 * k]) | (BigInt(w[4 * k + 1]) << 32n)).toString();
            }
            case "integer": case "date": case "timestamp": case "timestamptz":
              return String(d.values[k]);
            default:
              return batch.getChild(c.name).get(i);
          }
        }));
      }
    }
    return { rows };
  });
}

process.stdout.write(JSON.stringify(out, (k, v) => (typeof v === "bigint" ? v.toString() : v)));
