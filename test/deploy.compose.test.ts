import { expect } from "chai";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parse as parseYaml } from "yaml";
import { getComposeHash } from "@phala/dstack-sdk";
import { appComposeFor, composeImages, composeVariables, deployProblems, deterministicJson, UNRELEASED_DIGEST, VESTA_APP_SETTINGS } from "../attestation/appCompose";
import { composeHash } from "../attestation/compose";
import { DEV_COMPOSE_FILE, developmentEvidence } from "../attestation/development";
import { verifyEvidence } from "../attestation/verify";
import { recordDigest } from "../scripts/release";
import { collect, editJson, result } from "./helpers/attestation";
import { PATHS } from "../attestation/types";

const ROOT = path.join(__dirname, "..");
const COMPOSE = fs.readFileSync(path.join(ROOT, "docker-compose.yml"), "utf8");
const VESTA = "ghcr.io/vesta-project/vesta";
const RELEASED = recordDigest(COMPOSE, VESTA, `sha256:${"1".repeat(64)}`).text;
/** A real dstack deployment's app_compose and the compose hash its VM measured (test/fixtures/dstack-app-compose.json). */
const VECTOR = JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures", "dstack-app-compose.json"), "utf8")) as { compose_hash: string; app_compose: string };

type Service = { image: string; command?: string[]; environment?: string[]; volumes?: string[]; user?: string };
const services = (text: string) => (parseYaml(text) as { services: Record<string, Service> }).services;
const envOf = (s: Service) => Object.fromEntries((s.environment ?? []).map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));

describe("the dstack app compose file (docker-compose.yml) and its compose hash", function () {
  it("runs the relayer, the triggers service, PostgreSQL and the ingress, every image pinned by @sha256 digest", function () {
    const s = services(COMPOSE);
    expect(Object.keys(s).sort()).to.deep.equal(["ingress", "postgres", "relayer", "triggers"]);
    for (const [name, svc] of Object.entries(s)) expect(svc.image, name).to.match(/^[a-z0-9./:-]+@sha256:[0-9a-f]{64}$/);
    expect(s.relayer.command).to.deep.equal(["relayer"]);
    expect(s.triggers.command).to.deep.equal(["triggers"]);
    expect(s.relayer.image).to.equal(s.triggers.image); // one image, two entry points
  });

  it("takes every secret from the environment, runs both services in production, and mounts the guest agent's socket for the dstack key provider", function () {
    const s = services(COMPOSE);
    const relayer = envOf(s.relayer);
    const triggers = envOf(s.triggers);
    for (const [svc, name] of [[relayer, "VESTA_PAYER_KEYS"], [relayer, "STRIPE_SECRET_KEY"], [relayer, "STRIPE_WEBHOOK_SECRET"], [triggers, "TRIGGERS_SECRET_KEY"], [envOf(s.postgres), "POSTGRES_PASSWORD"], [envOf(s.ingress), "CLOUDFLARE_API_TOKEN"]] as const) {
      expect(svc[name], name).to.equal(`\${${name}}`);
    }
    for (const url of [relayer.DATABASE_URL, triggers.DATABASE_URL]) expect(url).to.match(/^postgres:\/\/vesta:\$\{POSTGRES_PASSWORD\}@postgres:5432\/vesta/);
    expect(relayer.DATABASE_URL).to.not.equal(triggers.DATABASE_URL); // their tables would collide (both have "runs")
    expect([relayer.VESTA_MODE, triggers.VESTA_MODE, relayer.VESTA_KEY_PROVIDER, relayer.VESTA_ATTESTATION_SOURCE]).to.deep.equal(["production", "production", "dstack", "dstack"]);
    expect(s.relayer.volumes).to.include("/var/run/dstack.sock:/var/run/dstack.sock");
    expect(s.triggers.user).to.equal(undefined); // the image's non-root user
    // dstack passes the encrypted variables the manifest allows: exactly those the file uses
    expect(JSON.parse(appComposeFor(COMPOSE).appCompose).allowed_envs).to.deep.equal(composeVariables(COMPOSE));
    expect(composeVariables(COMPOSE)).to.include.members(["VESTA_PAYER_KEYS", "STRIPE_SECRET_KEY", "POSTGRES_PASSWORD", "TRIGGERS_SECRET_KEY"]);
  });

  it("serializes app_compose as dstack does: a real deployment's manifest is reproduced byte for byte, and hashes to the compose hash its VM measured", function () {
    expect(composeHash(VECTOR.app_compose)).to.equal(VECTOR.compose_hash);
    expect(deterministicJson(JSON.parse(VECTOR.app_compose))).to.equal(VECTOR.app_compose);
    expect(getComposeHash(JSON.parse(VECTOR.app_compose))).to.equal(VECTOR.compose_hash);
  });

  it("gives the compose hash dstack's SDK computes for the same app_compose, with Vesta's manifest settings", function () {
    const { appCompose, composeHash: hash } = appComposeFor(RELEASED);
    const manifest = JSON.parse(appCompose);
    expect(getComposeHash(manifest)).to.equal(hash);
    expect(composeHash(appCompose)).to.equal(hash);
    expect(manifest).to.deep.include({ ...VESTA_APP_SETTINGS, docker_compose_file: RELEASED });
    expect(appComposeFor(RELEASED.replace("restart: always", "restart: unless-stopped")).composeHash).to.not.equal(hash);
  });

  it("refuses to deploy an unreleased image, an unpinned one and a local bind mount; a released file has no problem", function () {
    expect(deployProblems(COMPOSE)).to.deep.equal([
      `relayer: image ${VESTA}@${UNRELEASED_DIGEST} is not released yet (run scripts/release.ts, which records the digest)`,
      `triggers: image ${VESTA}@${UNRELEASED_DIGEST} is not released yet (run scripts/release.ts, which records the digest)`,
    ]);
    expect(deployProblems(RELEASED)).to.deep.equal([]);
    const bad = `services:\n  web:\n    image: nginx:1.27\n    volumes:\n      - ./conf:/etc/nginx\n      - data:/data\n`;
    expect(deployProblems(bad)).to.deep.equal(['web: image "nginx:1.27" is not pinned with @sha256:<digest>', 'web: volume "./conf" is a local path (a dstack app ships the compose file alone)']);
    expect(() => appComposeFor("just: text\n")).to.throw("the compose file defines no services");
  });

  it("release records a digest in the services that run the image, keeping the rest of the file byte for byte", function () {
    const digest = `sha256:${"2".repeat(64)}`;
    const { text, services: changed } = recordDigest(RELEASED, VESTA, digest);
    expect(changed).to.deep.equal(["relayer", "triggers"]);
    expect(text).to.equal(COMPOSE.replaceAll(UNRELEASED_DIGEST, digest));
    expect(composeImages(text).postgres).to.equal(composeImages(COMPOSE).postgres);
    expect(() => recordDigest(COMPOSE, "ghcr.io/other/image", digest)).to.throw("no service of the compose file runs ghcr.io/other/image");
    expect(() => recordDigest(COMPOSE, VESTA, "sha256:abc")).to.throw("not an image digest");
    expect(() => recordDigest(COMPOSE, `${VESTA}:1.0`, digest)).to.throw("give the image without tag or digest");
  });

  it("npm run compose:hash prints the compose file's hash and writes the app_compose to deploy; an unreleased file is refused", async function () {
    this.timeout(60_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-compose-"));
    const task = (file: string) =>
      promisify(execFile)(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/governance/compose-hash.ts", "hash"], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, VESTA_COMPOSE_FILE: file, VESTA_APP_COMPOSE_FILE: path.join(dir, "app-compose.json") },
      });
    fs.writeFileSync(path.join(dir, "released.yml"), RELEASED);
    const { stdout } = await task(path.join(dir, "released.yml"));
    const expected = appComposeFor(RELEASED);
    expect(stdout.split("\n")[0]).to.equal(`0x${expected.composeHash}`);
    expect(fs.readFileSync(path.join(dir, "app-compose.json"), "utf8")).to.equal(expected.appCompose);
    fs.rmSync(path.join(dir, "app-compose.json"));
    const refused = await task(path.join(ROOT, "docker-compose.yml")).then(() => undefined, (e) => e as { code: number; stderr: string });
    expect(refused?.code).to.equal(1);
    expect(refused?.stderr).to.contain("cannot be deployed as it is:").and.to.contain("relayer: image").and.to.contain("is not released yet");
    expect(fs.existsSync(path.join(dir, "app-compose.json"))).to.equal(false); // nothing written
    fs.rmSync(dir, { recursive: true });
  });

  describe("the verifier checks the same file (application.compose-file)", function () {
    const evidence = (composeFile = DEV_COMPOSE_FILE) => collect(developmentEvidence({ appId: "11".repeat(20), domain: "vesta.example.com", composeFile }).source);

    it("passes when the deployed app_compose is the one built from the file", async function () {
      const r = result(await verifyEvidence(await evidence(RELEASED), { composeFile: { name: "docker-compose.yml", text: RELEASED } }), "application.compose-file");
      expect(r).to.deep.equal({ check: "application.compose-file", status: "pass", reason: `app_compose is the manifest of docker-compose.yml (compose hash ${appComposeFor(RELEASED).composeHash})` });
    });

    it("fails when another compose file runs, or the same file with other manifest settings", async function () {
      const other = await verifyEvidence(await evidence(DEV_COMPOSE_FILE), { composeFile: { name: "docker-compose.yml", text: RELEASED } });
      expect(result(other, "application.compose-file").status).to.equal("fail");
      expect(result(other, "application.compose-file").reason).to.match(/^the deployed compose file is not docker-compose\.yml \(compose hash [0-9a-f]{64}, docker-compose\.yml gives [0-9a-f]{64}\)$/);
      const logs = editJson(await evidence(RELEASED), PATHS.info, (i) => {
        i.tcb_info.app_compose = deterministicJson({ ...JSON.parse(i.tcb_info.app_compose), public_logs: true, kms_enabled: false });
        i.compose_hash = composeHash(i.tcb_info.app_compose);
      });
      const r = result(await verifyEvidence(logs, { composeFile: { name: "docker-compose.yml", text: RELEASED } }), "application.compose-file");
      expect(r.status).to.equal("fail");
      expect(r.reason).to.match(/^the deployed compose file is docker-compose\.yml, but its manifest settings differ \(kms_enabled, public_logs\): compose hash [0-9a-f]{64}, expected [0-9a-f]{64}$/);
    });
  });
});
