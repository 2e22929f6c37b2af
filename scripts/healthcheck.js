/**
 * The image's HEALTHCHECK (plain JavaScript: it runs every few seconds, without ts-node): GET /live
 * (liveness: the process answers; it does not flap with the chain, the database or the load, as the
 * relayer's Chipotle /health and both /ready do) of the service this container runs, found from the entry point's command line (process 1: "serve.ts
 * relayer|triggers"), on its port (VESTA_PORT, default 8000; TRIGGERS_PORT, default 8100).
 * VESTA_HEALTH_URL overrides the URL. Exits 0 on a 200 within 4 seconds, 1 otherwise.
 */
"use strict";
const fs = require("node:fs");
const http = require("node:http");

function healthUrl(env, cmdline) {
  if (env.VESTA_HEALTH_URL) return env.VESTA_HEALTH_URL;
  const args = cmdline.split("\0").filter(Boolean);
  const triggers = args[args.length - 1] === "triggers";
  const port = triggers ? env.TRIGGERS_PORT || "8100" : env.VESTA_PORT || "8000";
  return `http://127.0.0.1:${port}/live`;
}

function readCmdline() {
  try {
    return fs.readFileSync("/proc/1/cmdline", "utf8");
  } catch {
    return "";
  }
}

if (require.main === module) {
  const req = http.get(healthUrl(process.env, readCmdline()), { timeout: 4000 }, (res) => {
    res.resume();
    process.exit(res.statusCode === 200 ? 0 : 1);
  });
  req.on("timeout", () => req.destroy(new Error("timeout")));
  req.on("error", () => process.exit(1));
}

module.exports = { healthUrl };
