"""Compares what each reader read of an xlsx export with the same rows as
JSON, cell by cell, and prints a summary per reader.

Usage: compare.py API_JSON READER=READ_JSON ...

API_JSON is the API's JSON: {"data": [row, ...], ...} or a bare array of
row objects whose values are strings in the API's formats. Each READ_JSON
is what read_*.py or read_node.js printed, or a file holding the reader's
error text when it failed. A workbook may continue on further sheets: each
sheet must start with the header (the JSON's keys, in order), and the data
rows of all sheets, in order, must be the JSON's rows.

A cell matches the API's value when:
  - both are empty (an empty string or null in the JSON, no value read);
  - the reader read text equal to it; or text and value are both numbers,
    and equal (LibreOffice's text of a number, "150000" for "150000.00");
  - the reader read a number equal to the value's number;
  - the reader read a date, or text in the API's date format, equal to
    the value's date: for "YYYY-MM-DD", the same day at midnight; for a
    timestamp, the same instant, an offset such as "+00" applied, to the
    microsecond.
Two near misses are counted and shown, not failed: a date within a
millisecond (SheetJS 0.18 truncates a serial's time to whole milliseconds,
so 11:32:42, stored as the nearest double, reads 11:32:41.999), and text
shown to the second for a value with a fraction of a second (the
yyyy-mm-dd hh:mm:ss format does not show it).
Exits 1 on any mismatch or reader failure.
"""

import datetime
import json
import re
import sys

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?([+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?$")
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def parse_stamp(s):
    """Parses a date or timestamp in the API's formats (or ISO 8601 as the
    readers print) into a naive UTC datetime and whether it has a fraction
    of a second; None if s is neither."""
    if DATE.match(s):
        return datetime.datetime.strptime(s, "%Y-%m-%d"), False
    m = STAMP.match(s)
    if not m:
        return None
    day, hh, mm, ss, frac, off = m.groups()
    t = datetime.datetime.strptime(day, "%Y-%m-%d").replace(hour=int(hh), minute=int(mm), second=int(ss))
    if frac:
        t += datetime.timedelta(microseconds=round(float(frac) * 1e6))
    if off:
        sign = -1 if off[0] == "-" else 1
        parts = off[1:].replace(":", "")
        secs = int(parts[0:2]) * 3600 + int(parts[2:4] or 0) * 60 + int(parts[4:6] or 0)
        t -= sign * datetime.timedelta(seconds=secs)
    return t, bool(frac and float(frac) != 0)


def numbers_equal(a, b):
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


EXACT, NEAR = "exact", "near"


def matches(got, want):
    """Reports whether a cell read as got matches the API's string want:
    EXACT, NEAR (see the module's doc) or None."""
    if want is None:
        want = ""
    if got is None or got == "":
        return EXACT if want == "" else None
    if want == "" or isinstance(got, bool):
        return None
    if isinstance(got, (int, float)):
        ok = NUMBER.match(want) and numbers_equal(float(got), float(want))
        return EXACT if ok else None
    if isinstance(got, dict) and "date" in got:
        w, g = parse_stamp(want), parse_stamp(got["date"])
        if w is None or g is None:
            return None
        diff = abs((g[0] - w[0]).total_seconds())
        if diff < 0.0000005:
            return EXACT
        return NEAR if diff <= 0.0010005 else None
    if isinstance(got, str):
        if got == want:
            return EXACT
        if NUMBER.match(got) and NUMBER.match(want):
            return EXACT if numbers_equal(float(got), float(want)) else None
        w, g = parse_stamp(want), parse_stamp(got)
        if w is None or g is None:
            return None
        diff = abs((g[0] - w[0]).total_seconds())
        if diff < 0.0000005:
            return EXACT
        # Text shown to the second: the value's fraction is not shown.
        return NEAR if w[1] and not g[1] and diff < 1 else None
    return None


def load_api(path):
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    rows = doc["data"] if isinstance(doc, dict) else doc
    if not rows:
        return None, []
    header = list(rows[0].keys())
    return header, [[r.get(k) for k in header] for r in rows]


def trim(row):
    """Drops trailing empty cells: readers pad rows differently."""
    row = list(row)
    while row and (row[-1] is None or row[-1] == ""):
        row.pop()
    return row


def compare(header, want_rows, read):
    """Returns (summary lines, mismatch lines, near misses) for one
    reader's output."""
    summary, bad, near = [], [], []
    got_rows = []
    for s in read["sheets"]:
        rows = s["rows"]
        # Trailing empty rows are padding, not data.
        while rows and not trim(rows[-1]):
            rows = rows[:-1]
        ncols = max((len(trim(r)) for r in rows), default=0)
        summary.append("  sheet %-24s %7d rows (header included), %3d columns  [%s]" % (
            repr(s["name"]), len(rows), ncols, s.get("note", "")))
        if not rows:
            bad.append("sheet %r: no rows" % s["name"])
            continue
        if header is not None and [str(v) if v is not None else "" for v in trim(rows[0])] != header:
            bad.append("sheet %r: header %r, want %r" % (s["name"], trim(rows[0])[:5], header[:5]))
        got_rows.extend((s["name"], i + 2, r) for i, r in enumerate(rows[1:]))
    if len(got_rows) != len(want_rows):
        bad.append("%d data rows read, want %d" % (len(got_rows), len(want_rows)))
    for (sheet, line, got), want in zip(got_rows, want_rows):
        if len(trim(got)) > len(want):
            bad.append("sheet %r row %d: %d cells, want at most %d" % (sheet, line, len(trim(got)), len(want)))
        for j, w in enumerate(want):
            g = got[j] if j < len(got) else None
            m = matches(g, w)
            if m == NEAR:
                near.append("sheet %r row %d column %s (%s): read %r for %r" % (
                    sheet, line, j + 1, header[j] if header else "?", g, w))
            elif m is None:
                bad.append("sheet %r row %d column %s (%s): read %r, want %r" % (
                    sheet, line, j + 1, header[j] if header else "?", g, w))
    return summary, bad, near


def main():
    header, want_rows = load_api(sys.argv[1])
    print("API JSON: %d rows, %d columns" % (len(want_rows), len(header or [])))
    failed = False
    for arg in sys.argv[2:]:
        name, path = arg.split("=", 1)
        try:
            with open(path, encoding="utf-8") as fh:
                read = json.load(fh)
        except (OSError, ValueError) as err:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read().strip()
            print("%s: FAILED to read the workbook: %s" % (name, (text or str(err))[-800:]))
            failed = True
            continue
        summary, bad, near = compare(header, want_rows, read)
        data = sum(max(len(s["rows"]) - 1, 0) for s in read["sheets"])
        print("%s: %d sheet(s), %d data rows read, %d mismatches, %d near misses" % (
            name, len(read["sheets"]), data, len(bad), len(near)))
        for line in summary:
            print(line)
        for line in near[:3]:
            print("  NEAR " + line)
        for line in bad[:10]:
            print("  MISMATCH " + line)
        if len(bad) > 10:
            print("  ... and %d more" % (len(bad) - 10))
        failed = failed or bool(bad)
    print("FAIL" if failed else "OK: every reader read every cell as the JSON says")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
