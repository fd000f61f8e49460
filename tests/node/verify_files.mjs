// Verify log files with verify.js and print one JSON document on stdout, for tests/test_verify_js.py
// to compare with `fairdice-verify --json` on the same files:
//
//   node tests/node/verify_files.mjs JOBS.json
//
// JOBS.json: [{"file": path, "trusted_keys": [hex], "receipt": object or null, "move_receipts": array or null,
//              "allow_unsigned": bool}]
// Output: {"results": [{file, ok, error, statuses, failing}], "ms": milliseconds}

import { readFileSync } from "node:fs";
import { verifyLog } from "../../api/static/verify.js";

const jobs = JSON.parse(readFileSync(process.argv[2], "utf8"));
const started = Date.now();
const results = [];
for (const job of jobs) {
  const report = await verifyLog(readFileSync(job.file), {
    trustedKeys: job.trusted_keys || [], receipt: job.receipt ?? null, moveReceipts: job.move_receipts ?? null,
    allowUnsigned: !!job.allow_unsigned,
  });
  results.push({
    file: job.file, ok: report.ok, error: report.error, statuses: report.statuses,
    failing: [...new Set(report.failures.map((f) => f.check))].sort(),
  });
}
process.stdout.write(JSON.stringify({ results, ms: Date.now() - started }) + "\n");
