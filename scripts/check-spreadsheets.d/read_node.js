// Reads an xlsx file with one Node reader and prints what it read as JSON,
// in the form read_python.py prints (see there).
//
// Usage: node read_node.js READER FILE, READER one of exceljs, sheetjs.
// Run with TZ=UTC: both libraries build JavaScript Dates, and toISOString
// then gives the wall-clock time the cell holds.
"use strict";

function cell(v) {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return { date: v.toISOString().replace("Z", "") + "000" };
  if (typeof v === "number" || typeof v === "boolean") return v;
  if (typeof v === "string") return v;
  // exceljs: rich text, hyperlinks, formulas, errors.
  if (v.richText) return v.richText.map((r) => r.text).join("");
  if (v.text !== undefined) return String(v.text);
  if (v.result !== undefined) return cell(v.result);
  if (v.error !== undefined) return "#ERROR " + v.error;
  return JSON.stringify(v);
}

async function readExcelJS(path) {
  const ExcelJS = require("exceljs");
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  const sheets = [];
  wb.eachSheet((ws) => {
    const rows = [];
    const ncols = ws.columnCount;
    ws.eachRow({ includeEmpty: true }, (row, n) => {
      while (rows.length < n - 1) rows.push([]);
      const out = [];
      for (let c = 1; c <= ncols; c++) out.push(cell(row.getCell(c).value));
      rows.push(out);
    });
    sheets.push({
      name: ws.name,
      rows,
      note: `exceljs rowCount ${ws.rowCount}, columnCount ${ncols}, dimensions ${ws.dimensions}`,
    });
  });
  return sheets;
}

function readSheetJS(path) {
  const XLSX = require("xlsx");
  const wb = XLSX.readFile(path, { cellDates: true });
  return wb.SheetNames.map((name) => {
    const ws = wb.Sheets[name];
    // sheet_to_json reads the range the sheet declares (!ref, from
    // <dimension>): the check that it is the true one.
    const rows = XLSX.utils.sheet_to_json(ws, { header: 1, raw: true, defval: null, blankrows: true });
    return { name, rows: rows.map((r) => r.map(cell)), note: `SheetJS ${XLSX.version}, !ref ${ws["!ref"]}` };
  });
}

async function main() {
  const [reader, path] = process.argv.slice(2);
  let sheets;
  if (reader === "exceljs") sheets = await readExcelJS(path);
  else if (reader === "sheetjs") sheets = readSheetJS(path);
  else throw new Error("unknown reader " + reader);
  process.stdout.write(JSON.stringify({ sheets }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
