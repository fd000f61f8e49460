// Verify log files with verify.js and print one JSON document on stdout, for tests/node/test_verify_js.py
// to compare with `fairdice-verify --json` on the same files:
//
//   node tests/node/verify_files.mjs JOBS.json
//
// JOBS.json: [{"file": path, "trusted_keys": [hex], "receipt": object or null, "move_receipts": array or null,
//              "allow_unsigned": bool, "tables": {rules: path of the optimal table's canonical bytes} (optional)}]
// Output: {"results": [{file, ok, error, reason, statuses, failing, failures, bots_replayed, ms}], "ms": milliseconds}

import { readFileSync } from "node:fs";
import { verifyLog } from "../../api/static/verify.js";

const jobs = JSON.parse(readFileSync(process.argv[2], "utf8"));
const started = Date.now();
const results = [];
for (const job of jobs) {
  const tables = job.tables ? Object.fromEntries(Object.entries(job.tables).map(([r, p]) => [r, readFileSync(p)])) : undefined;
  const began = performance.now();
  const report = await verifyLog(readFileSync(job.file), {
    trustedKeys: job.trusted_keys || [], receipt: job.receipt ?? null, moveReceipts: job.move_receipts ?? null,
    allowUnsigned: !!job.allow_unsigned, tables,
  });
  results.push({
    file: job.file, ok: report.ok, error: report.error, reason: report.reason, statuses: report.statuses,
    failing: [...new Set(report.failures.map((f) => f.check))].sort(),
    failures: report.failures.map((f) => ({ check: f.check, event: f.event, field: f.field })),
    bots_replayed: report.botsReplayed, ms: performance.now() - began,
  });
}
process.stdout.write(JSON.stringify({ results, ms: Date.now() - started }) + "\n");
