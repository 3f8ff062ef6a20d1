"""Reads an xlsx file with LibreOffice Calc and prints what it read as JSON,
in the form read_python.py prints (see there).

Usage: read_libreoffice.py FILE WORKDIR. LibreOffice, headless, converts
every sheet to a CSV of the cells as shown (dates in their number format),
so every cell comes back as text; WORKDIR holds the CSVs and LibreOffice's
profile.
"""

import csv
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}


def sheet_names(path):
    with zipfile.ZipFile(path) as z:
        wb = ET.fromstring(z.read("xl/workbook.xml"))
    return [s.get("name") for s in wb.findall("m:sheets/m:sheet", NS)]


def main():
    path, work = sys.argv[1], sys.argv[2]
    out = os.path.join(work, "libreoffice")
    os.makedirs(out, exist_ok=True)
    # Tokens: comma, double quote, UTF-8, line 1, -, language, no forced
    # quotes, -, contents as shown, no formulas, -, every sheet to its
    # own file (-1).
    flt = 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1'
    cmd = [
        "soffice", "-env:UserInstallation=file://" + os.path.join(os.path.abspath(work), "lo-profile"),
        "--headless", "--norestore", "--convert-to", flt, "--outdir", out, path,
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if res.returncode != 0:
        sys.exit("soffice failed: %s %s" % (res.stdout, res.stderr))
    stem = os.path.splitext(os.path.basename(path))[0]
    sheets = []
    for name in sheet_names(path):
        # LibreOffice names the files FILE-SHEET.csv, SHEET made safe for
        # a file name.
        candidates = [os.path.join(out, "%s-%s.csv" % (stem, name)),
                      os.path.join(out, "%s-%s.csv" % (stem, re.sub(r"[^\w.-]", "_", name)))]
        found = next((c for c in candidates if os.path.exists(c)), None)
        if found is None:
            sheets.append({"name": name, "rows": [], "note": "no CSV for this sheet in %s" % os.listdir(out)})
            continue
        with open(found, newline="", encoding="utf-8") as fh:
            rows = [[v if v != "" else None for v in r] for r in csv.reader(fh)]
        sheets.append({"name": name, "rows": rows, "note": "LibreOffice CSV of the cells as shown"})
    json.dump({"sheets": sheets}, sys.stdout)


if __name__ == "__main__":
    main()
