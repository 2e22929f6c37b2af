"use strict";
// Entry point of a sandbox worker thread (see pool.ts). Worker threads do not inherit require hooks
// registered in-process (as `hardhat test` does with ts-node), only execArgv (`node -r
// ts-node/register/transpile-only` works as is); register ts-node here when .ts cannot load yet.
if (!require.extensions[".ts"]) require("ts-node/register/transpile-only");
require("./worker.ts");
