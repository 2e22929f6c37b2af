import { expect } from "chai";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.join(__dirname, "..");
const HELPERS = path.join(__dirname, "helpers");

/** Runs `hardhat test` (the README's test command, without recompiling) on one spec file, with `env` on top of a CI-free environment. */
function hardhatTest(spec: string, env: NodeJS.ProcessEnv) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-suite-"));
  const file = path.join(dir, "fixture.spec.ts");
  fs.writeFileSync(file, spec);
  const base = { ...process.env };
  delete base.CI;
  try {
    const r = spawnSync(process.execPath, [require.resolve("hardhat/internal/cli/cli"), "test", "--no-compile", file], {
      cwd: ROOT,
      env: { ...base, ...env },
      encoding: "utf8",
      timeout: 60_000,
    });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A spec with one suite per required component, each hidden from it by the environment the test sets. */
const NEEDS_COMPONENTS = `
import { tempPostgres } from ${JSON.stringify(path.join(HELPERS, "postgres"))};
import { requireChromium } from ${JSON.stringify(path.join(HELPERS, "browser"))};
describe("needs PostgreSQL", function () {
  before(function () { tempPostgres(this).stop(); });
  it("runs", () => {});
});
describe("needs Chromium", function () {
  before(function () { requireChromium(this); });
  it("runs", () => {});
});
`;
const HIDDEN = { VESTA_PG_BIN_DIRS: "", TRIGGERS_TEST_DATABASE_URL: "", VESTA_CHROMIUM: "/nonexistent/chromium" };

describe("the test suite's own rules (green means ran)", function () {
  this.timeout(120_000);

  it("fails under CI, naming what is missing, when PostgreSQL and Chromium are hidden from the tests", function () {
    const r = hardhatTest(NEEDS_COMPONENTS, { ...HIDDEN, CI: "true" });
    expect(r.status, r.out).to.not.equal(0);
    expect(r.out).to.contain("PostgreSQL is unavailable: no initdb in VESTA_PG_BIN_DIRS (empty)");
    expect(r.out).to.contain("Chromium is unavailable: /nonexistent/chromium is missing");
    expect(r.out).to.contain("CI is set: a required component may not be skipped");
    expect(r.out).to.match(/^ +0 passing/m);
  });

  it("skips locally, saying why for each suite", function () {
    const r = hardhatTest(NEEDS_COMPONENTS, HIDDEN);
    expect(r.status, r.out).to.equal(0);
    expect(r.out).to.contain("(skipped: PostgreSQL is unavailable: no initdb in VESTA_PG_BIN_DIRS (empty)");
    expect(r.out).to.contain("(skipped: Chromium is unavailable: /nonexistent/chromium is missing");
    expect(r.out).to.match(/^ +2 pending$/m);
  });

  it("fails under CI when any test is pending, whatever made it pending", function () {
    const r = hardhatTest(`describe("s", () => { it("runs", () => {}); it.skip("skipped", () => {}); it("pending"); });`, { CI: "true" });
    expect(r.status, r.out).to.not.equal(0);
    expect(r.out).to.match(/Pending test forbidden/);
  });

  it("fails on a stray .only instead of running a smaller suite", function () {
    const r = hardhatTest(`describe("s", () => { it.only("one", () => {}); it("other", () => {}); });`, {});
    expect(r.status, r.out).to.not.equal(0);
    expect(r.out).to.contain("ERR_MOCHA_FORBIDDEN_EXCLUSIVITY");
  });

  it("stops a throwaway PostgreSQL once, however often stop is called (a suite run again after a failed start still holds it)", function () {
    this.timeout(60_000);
    const { tempPostgres } = require("./helpers/postgres") as typeof import("./helpers/postgres");
    const pg = tempPostgres(this);
    pg.stop();
    expect(() => pg.stop()).not.to.throw();
  });

  it("finds PostgreSQL's programs where Debian puts them when they are not on PATH", function () {
    const { pgProgram } = require("./helpers/postgres") as typeof import("./helpers/postgres");
    const fake = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-pgbin-"));
    try {
      fs.writeFileSync(path.join(fake, "initdb"), "#!/bin/sh\n", { mode: 0o755 });
      expect(pgProgram("initdb", { VESTA_PG_BIN_DIRS: `/nonexistent:${fake}` })).to.equal(path.join(fake, "initdb"));
      expect(() => pgProgram("pg_ctl", { VESTA_PG_BIN_DIRS: fake })).to.throw(`no pg_ctl in VESTA_PG_BIN_DIRS (${fake})`);
      // with a PATH that lacks it, the Debian location is searched
      const debian = fs.existsSync("/usr/lib/postgresql") ? fs.readdirSync("/usr/lib/postgresql").map((v) => `/usr/lib/postgresql/${v}/bin/initdb`) : [];
      const found = (() => {
        try {
          return pgProgram("initdb", { PATH: "/nonexistent" });
        } catch (err) {
          return (err as Error).message;
        }
      })();
      if (debian.some((f) => fs.existsSync(f))) expect(debian).to.include(found);
      else expect(found).to.equal("no initdb in PATH nor /usr/lib/postgresql/<version>/bin (install Debian's postgresql package)");
    } finally {
      fs.rmSync(fake, { recursive: true, force: true });
    }
  });
});
