// Parses Power Query M texts with Microsoft's own parser
// (@microsoft/powerquery-parser, from npm; scripts/ensure-node-tools
// installs it). Reads a JSON array of {"name", "text"} on stdin, prints one
// line per text (OK, or the stage and message of the error) and exits 1 when
// any text does not parse.
// Usage: node parse.js PATH_TO/node_modules/@microsoft/powerquery-parser < texts.json
"use strict";
const PQP = require(process.argv[2]);

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", async () => {
  let failed = 0;
  for (const { name, text } of JSON.parse(input)) {
    const r = await PQP.TaskUtils.tryLexParse(PQP.DefaultSettings, text);
    if (r.resultKind === "Ok") {
      console.log("OK   " + name);
    } else {
      failed++;
      console.log("FAIL " + name + ": " + r.stage + ": " + (r.error && r.error.message) + "\n" + text);
    }
  }
  process.exit(failed ? 1 : 0);
});
