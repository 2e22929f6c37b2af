import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { ERROR_CODES } from "../protocol/errors";

const ROOT = path.join(__dirname, "..");

/** Every .ts/.tsx file under `dir` (relative to the repository). */
function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.tsx?$/.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** The files `file` imports (or re-exports, or requires), resolved relative to the repository; packages as their names. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*|import\s+)["']([^"']+)["']/g)].map((m) => m[1]);
  return specs.map((s) => (s.startsWith(".") ? path.normalize(path.join(path.dirname(file), s)) : s));
}

/**
 * Issue 19, section 4: what the services share lives in protocol/; executor, billing and the
 * triggers service import nothing from relayer/, and the dashboard bundle only protocol/ and the
 * typed client. A new import across a boundary fails here.
 */
describe("module boundaries (protocol/)", function () {
  for (const dir of ["executor", "billing", "triggers", "protocol"]) {
    it(`${dir}/ imports nothing from relayer/`, function () {
      const crossing = sources(dir).flatMap((f) => importsOf(f).filter((i) => i === "relayer" || i.startsWith("relayer/")).map((i) => `${f} -> ${i}`));
      expect(crossing).to.deep.equal([]);
    });
  }

  it("protocol/ imports no other part of Vesta (only packages and typechain's generated bindings)", function () {
    const crossing = sources("protocol").flatMap((f) =>
      importsOf(f)
        .filter((i) => !i.startsWith("protocol/") && /^(relayer|executor|billing|triggers|attestation|dashboard|scripts|client)(\/|$)/.test(i))
        .map((i) => `${f} -> ${i}`),
    );
    expect(crossing).to.deep.equal([]);
  });

  it("the dashboard imports only protocol/, the typed client and packages", function () {
    const crossing = sources("dashboard/src").flatMap((f) =>
      importsOf(f)
        .filter((i) => !i.startsWith("dashboard/") && !i.startsWith("protocol/") && i !== "@client" && !/^[@a-z]/.test(i))
        .map((i) => `${f} -> ${i}`),
    );
    expect(crossing).to.deep.equal([]);
  });

  it("the dashboard bundles no Node-only protocol module (native secp256k1, express plumbing)", function () {
    const reached = new Set<string>();
    const visit = (f: string) => {
      for (const i of importsOf(f)) {
        if (!i.startsWith("protocol/") && !i.startsWith("dashboard/")) continue;
        const file = [`${i}.ts`, `${i}.tsx`, i].find((c) => fs.existsSync(path.join(ROOT, c)) && fs.statSync(path.join(ROOT, c)).isFile());
        if (file && !reached.has(file)) {
          reached.add(file);
          visit(file);
        }
      }
    };
    for (const f of sources("dashboard/src")) visit(f);
    expect([...reached].filter((f) => /protocol\/(ecdsa|http|jsonBody|validate|trustProxy)\.ts$/.test(f))).to.deep.equal([]);
  });

  it("every error code the source answers is in the catalogue, with the catalogue's status", function () {
    const problems: string[] = [];
    for (const dir of ["relayer", "executor", "billing", "triggers", "attestation", "protocol"]) {
      for (const f of sources(dir)) {
        const text = fs.readFileSync(path.join(ROOT, f), "utf8");
        for (const m of text.matchAll(/new AppError\(\s*(\d{3}),\s*"([a-z_]+)"/g)) {
          const entry = ERROR_CODES[m[2] as keyof typeof ERROR_CODES];
          if (!entry) problems.push(`${f}: ${m[2]} is not in the catalogue`);
          else if (entry.status !== Number(m[1])) problems.push(`${f}: ${m[2]} answered ${m[1]}, catalogued ${entry.status}`);
        }
      }
    }
    expect(problems).to.deep.equal([]);
  });
});
