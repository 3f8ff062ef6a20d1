"""Reads an xlsx file with one Python reader and prints what it read as JSON.

Usage: read_python.py READER FILE, READER one of openpyxl-read-only,
openpyxl, pandas. Output: {"sheets": [{"name", "rows": [[cell, ...], ...],
"note"}]} where a cell is null (empty), a string, a number, or
{"date": "YYYY-MM-DDTHH:MM:SS.ffffff"} for a date or time the reader turned
into one. Nothing is normalised here beyond that: compare.py judges.
"""

import datetime
import json
import math
import sys


def cell(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        if isinstance(v, float) and math.isnan(v):
            return None
        return v
    if isinstance(v, datetime.datetime):
        return {"date": v.replace(tzinfo=None).isoformat(timespec="microseconds")}
    if isinstance(v, datetime.date):
        return {"date": datetime.datetime(v.year, v.month, v.day).isoformat(timespec="microseconds")}
    if isinstance(v, datetime.time):
        return {"date": "1899-12-30T" + v.isoformat(timespec="microseconds")}
    return str(v)


def read_openpyxl(path, read_only):
    import openpyxl

    wb = openpyxl.load_workbook(path, read_only=read_only, data_only=True)
    sheets = []
    for ws in wb.worksheets:
        # In read-only mode openpyxl believes the sheet's <dimension>: rows
        # are cut to its columns, which is how a sheet saying "A1" reads as
        # one cell.
        note = "dimension %s, max_row %s, max_column %s" % (
            ws.calculate_dimension() if not read_only or ws.max_row else "?",
            ws.max_row,
            ws.max_column,
        )
        rows = [[cell(v) for v in r] for r in ws.iter_rows(values_only=True)]
        sheets.append({"name": ws.title, "rows": rows, "note": note})
    if read_only:
        wb.close()
    return sheets


def read_pandas(path):
    import pandas as pd

    frames = pd.read_excel(path, sheet_name=None, header=None, dtype=object)
    sheets = []
    for name, df in frames.items():
        rows = []
        for r in df.itertuples(index=False, name=None):
            rows.append([cell(v.to_pydatetime() if isinstance(v, pd.Timestamp) else v) for v in r])
        sheets.append({"name": name, "rows": rows, "note": "pandas %s, shape %s" % (pd.__version__, df.shape)})
    return sheets


def main():
    reader, path = sys.argv[1], sys.argv[2]
    if reader == "openpyxl-read-only":
        sheets = read_openpyxl(path, True)
    elif reader == "openpyxl":
        sheets = read_openpyxl(path, False)
    elif reader == "pandas":
        sheets = read_pandas(path)
    else:
        sys.exit("unknown reader " + reader)
    json.dump({"sheets": sheets}, sys.stdout)


if __name__ == "__main__":
    main()
