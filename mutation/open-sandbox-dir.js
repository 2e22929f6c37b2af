// Loaded by the mocha runner in Stryker's copy of the project (mutation/groups.json, npm run mutate).
// Stryker makes that copy's directory with mkdtemp (mode 0700); a sandbox process runs as another
// user (nobody, when the tests run as root) and must read the guest sources inside it, as it can in
// a checkout. Opening the directory to traversal (0755, what a checkout has) changes nothing else.
const fs = require("node:fs");
const path = require("node:path");

if (/^sandbox-/.test(path.basename(process.cwd()))) fs.chmodSync(process.cwd(), 0o755);
