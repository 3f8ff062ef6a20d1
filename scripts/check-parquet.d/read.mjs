// Reads a Parquet export with DuckDB and hyparquet and compares what they
// read with PostgreSQL's figures (sql.txt: "name|value" lines) and, when
// given, with the same export read through one connection. See
// ../check-parquet. Usage: node read.mjs MODULES FILE SQL [ONE]
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, file, sqlFile, one] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(path.join(modules, p)).href);
const { DuckDBInstance } = await load('@duckdb/node-api/lib/index.js');
const { parquetMetadataAsync, parquetReadObjects } = await load('hyparquet/src/index.js');

let failures = 0;
const check = (what, got, want) => {
  const ok = String(got) === String(want);
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'DIFF'} ${what}: ${got}${ok ? '' : ` (PostgreSQL: ${want})`}`);
};

const con = await (await DuckDBInstance.create(':memory:')).connect();
const rows = async (sql) => (await con.runAndReadAll(sql)).getRows();
const src = (f) => `read_parquet('${f.replaceAll("'", "''")}')`;

const sql = Object.fromEntries(fs.readFileSync(sqlFile, 'utf8').trim().split('\n').map((l) => {
  const i = l.lastIndexOf('|');
  return [l.slice(0, i), l.slice(i + 1)];
}));

console.log(`DuckDB reading ${file}:`);
const [[n, sum, codes, first, last]] = await rows(`SELECT count(*)::varchar, sum(costo_servicio)::varchar,
  count(DISTINCT task_code)::varchar, min(task_end_date)::varchar, max(task_end_date)::varchar FROM ${src(file)}`);
check('rows', n, sql.rows);
check('sum(costo_servicio)', sum, sql.sum);
check('distinct task_code', codes, sql['distinct task_code']);
check('first task_end_date', first, sql['first task_end_date']);
check('last task_end_date', last, sql['last task_end_date']);
for (const [status, count] of await rows(`SELECT 'status ' || coalesce(task_status, '(null)'), count(*)::varchar
    FROM ${src(file)} GROUP BY task_status ORDER BY 1`)) {
  check(status, count, sql[status]);
}
const groups = (await rows(`SELECT row_group_id, any_value(row_group_num_rows)::varchar FROM parquet_metadata('${file}')
  GROUP BY 1 ORDER BY 1`)).map((r) => Number(r[1]));
console.log(`     row groups (DuckDB): ${groups.length}: ${groups.join(', ')}`);

console.log('hyparquet:');
const buf = fs.readFileSync(file);
const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
const md = await parquetMetadataAsync(ab);
check('rows in the footer', md.num_rows, sql.rows);
check('row groups', md.row_groups.map((g) => Number(g.num_rows)).join(', '), groups.join(', '));
const cols = ['contract_id', 'task_code', 'costo_servicio', 'task_status', 'task_end_date'];
let start = 0;
const key = (r) => JSON.stringify(cols.map((c) => (r[c] instanceof Date ? r[c].toISOString().slice(0, 10) : r[c])),
  (k, v) => (typeof v === 'bigint' ? v.toString() : v));
let compared = 0;
for (const g of groups.slice(0, -1)) {
  start += g;
  const from = Math.max(start - 3, 0);
  const got = await parquetReadObjects({ file: ab, columns: cols, rowStart: from, rowEnd: start + 3 });
  const want = await rows(`SELECT ${cols.map((c) => `${c}::varchar`).join(', ')} FROM
    (SELECT *, row_number() OVER () - 1 AS i FROM ${src(file)}) WHERE i >= ${from} AND i < ${start + 3} ORDER BY i`);
  for (let i = 0; i < got.length; i++) {
    const h = cols.map((c) => {
      const v = got[i][c];
      if (v === null || v === undefined) return null;
      if (v instanceof Date) return v.toISOString().slice(0, 10);
      return String(v);
    });
    const d = want[i].map((v, j) => (v === null ? null : cols[j] === 'costo_servicio' ? String(Number(v)) : v));
    if (JSON.stringify(h) !== JSON.stringify(d)) {
      failures++;
      console.log(`DIFF row ${from + i}: hyparquet ${JSON.stringify(h)}, DuckDB ${JSON.stringify(d)}`);
    }
    compared++;
  }
}
console.log(`ok   ${compared} rows either side of ${groups.length - 1} row group starts read alike`);

if (one) {
  console.log(`the same export through one connection, ${one}:`);
  const hashes = (f) => `SELECT row_number() OVER () AS i, md5(concat_ws('|', *COLUMNS(*))) AS h FROM ${src(f)}`;
  const [[differ]] = await rows(`SELECT count(*)::varchar FROM (${hashes(file)}) a FULL JOIN (${hashes(one)}) b USING (i)
    WHERE a.h IS DISTINCT FROM b.h`);
  check('rows that differ, in order', differ, 0);
  const [[only1]] = await rows(`SELECT count(*)::varchar FROM (SELECT * FROM ${src(file)} EXCEPT ALL SELECT * FROM ${src(one)})`);
  const [[only2]] = await rows(`SELECT count(*)::varchar FROM (SELECT * FROM ${src(one)} EXCEPT ALL SELECT * FROM ${src(file)})`);
  check('rows only in the parts', only1, 0);
  check('rows only in the one', only2, 0);
  const g1 = (await rows(`SELECT count(DISTINCT row_group_id)::varchar FROM parquet_metadata('${one}')`))[0][0];
  console.log(`     row groups through one connection: ${g1}`);
}
console.log(failures ? `${failures} differences` : 'every check passed');
process.exit(failures ? 1 : 0);
