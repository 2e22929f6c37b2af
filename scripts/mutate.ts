/**
 * `npm run mutate [group ...]`: mutation testing of the security-critical modules (StrykerJS).
 *
 * Each group of `mutation/groups.json` is mutated against only the test files that protect it, so a
 * group takes minutes, not the hours a run against the whole suite would. Prints each module's
 * score and every surviving mutant (file:line, mutator, replacement), and writes
 * `reports/mutation/<group>.json` and `reports/mutation/summary.json`. Outside `npm test`.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** `grep` (optional): only the tests whose full title matches, where a spec file also holds tests of other modules. */
type Group = { mutate: string[]; spec: string[]; grep?: string };
type Mutant = { status: string; mutatorName: string; replacement?: string; location: { start: { line: number } } };
type Report = { files: Record<string, { mutants: Mutant[] }> };

const root = path.resolve(__dirname, "..");
const reports = path.join(root, "reports", "mutation");
const groups: Record<string, Group> = JSON.parse(readFileSync(path.join(root, "mutation", "groups.json"), "utf8"));
delete (groups as Record<string, unknown>)["//"];

function strykerConfig(name: string, group: Group) {
  return {
    $schema: "../../node_modules/@stryker-mutator/core/schema/stryker-schema.json",
    packageManager: "npm",
    testRunner: "mocha",
    plugins: ["@stryker-mutator/mocha-runner"],
    mochaOptions: { spec: group.spec, require: ["ts-node/register/transpile-only", "hardhat/register"], ...(group.grep ? { grep: group.grep } : {}) },
    mutate: group.mutate,
    coverageAnalysis: "perTest",
    ignoreStatic: true,
    concurrency: 1,
    timeoutMS: 60000,
    reporters: ["progress-append-only", "json"],
    jsonReporter: { fileName: path.join("reports", "mutation", `${name}.json`) },
    tempDirName: ".stryker-tmp",
    cleanTempDir: "always",
    // Type checking each mutant would cost more than running it; a mutant that does not compile fails its tests.
    disableTypeChecks: "{executor,relayer,triggers,billing,protocol}/**/*.ts",
  };
}

/** Stryker's score: detected (killed or timed out) over detected plus undetected (survived or not covered). */
function scores(report: Report) {
  return Object.entries(report.files).map(([file, { mutants }]) => {
    const count = (...statuses: string[]) => mutants.filter((m) => statuses.includes(m.status)).length;
    const detected = count("Killed", "Timeout");
    const undetected = count("Survived", "NoCoverage");
    const survivors = mutants
      .filter((m) => m.status === "Survived" || m.status === "NoCoverage")
      .map((m) => `${file}:${m.location.start.line} ${m.mutatorName}${m.status === "NoCoverage" ? " (no coverage)" : ""} -> ${JSON.stringify(m.replacement ?? "")}`);
    return { file, detected, undetected, score: detected + undetected === 0 ? 100 : (100 * detected) / (detected + undetected), survivors };
  });
}

function main() {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((g) => !(g in groups));
  if (unknown.length) {
    console.error(`unknown group(s): ${unknown.join(", ")}; groups: ${Object.keys(groups).join(", ")}`);
    process.exit(2);
  }
  mkdirSync(reports, { recursive: true });
  const summaryFile = path.join(reports, "summary.json");
  let summary: Record<string, ReturnType<typeof scores>> = {};
  try {
    summary = JSON.parse(readFileSync(summaryFile, "utf8"));
  } catch {
    // first run
  }
  for (const name of wanted.length ? wanted : Object.keys(groups)) {
    const configFile = path.join(reports, `${name}.config.json`);
    writeFileSync(configFile, JSON.stringify(strykerConfig(name, groups[name]), null, 2));
    const started = Date.now();
    console.log(`\n== mutate ${name}: ${groups[name].mutate.join(", ")} against ${groups[name].spec.join(", ")}`);
    const run = spawnSync(process.execPath, [path.join(root, "node_modules", "@stryker-mutator", "core", "bin", "stryker.js"), "run", configFile], { cwd: root, stdio: "inherit" });
    if (run.status !== 0) {
      console.error(`stryker failed for ${name} (exit ${run.status})`);
      process.exit(1);
    }
    summary[name] = scores(JSON.parse(readFileSync(path.join(reports, `${name}.json`), "utf8")));
    console.log(`== ${name} done in ${Math.round((Date.now() - started) / 1000)} s`);
    writeFileSync(summaryFile, JSON.stringify(summary, null, 2));
  }
  console.log("\nmutation score by module (killed or timed out / all covered and uncovered mutants):");
  for (const [name, files] of Object.entries(summary)) {
    for (const f of files) console.log(`  ${f.score.toFixed(2).padStart(6)}%  ${f.file}  (${f.detected}/${f.detected + f.undetected}, group ${name})`);
  }
  const survivors = Object.values(summary).flatMap((files) => files.flatMap((f) => f.survivors));
  console.log(`\n${survivors.length} surviving mutants${survivors.length ? " (each killed by a test or explained in README, 'Mutation testing'):" : ""}`);
  for (const s of survivors) console.log(`  ${s}`);
}

main();
