import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { hostFetch } from "../executor/sandbox/fetch";
import { DEFAULT_LIMITS } from "../executor/sandbox/types";

const get = (url: string) => ({ op: "fetch" as const, url, method: "GET", headers: {} });

describe("action fetch: no private networks", function () {
  let server: http.Server;
  let hits = 0;
  let base = "";
  before(async () => {
    server = http.createServer((req, res) => {
      hits++;
      res.end("secret of the operator's network");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  for (const url of [
    "http://127.0.0.1:1/",
    "http://localhost:1/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[fe80::1]/",
    "http://[fd00::1]/",
    "http://[::ffff:127.0.0.1]/",
  ]) {
    it(`refuses ${url} before connecting`, async function () {
      const before = hits;
      try {
        await hostFetch(get(url), DEFAULT_LIMITS);
        expect.fail("a private address was fetched");
      } catch (err) {
        expect((err as Error).message).to.match(/private or local address/);
      }
      expect(hits).to.equal(before);
    });
  }

  it("refuses a local server that a test would reach, unless the operator allows private networks", async function () {
    const before = hits;
    await hostFetch(get(`${base}/`), DEFAULT_LIMITS).then(
      () => expect.fail("fetched a loopback server"),
      (err: Error) => expect(err.message).to.match(/private or local address/),
    );
    expect(hits).to.equal(before);
    const allowed = await hostFetch(get(`${base}/`), DEFAULT_LIMITS, { allowPrivateNetworks: true });
    expect(allowed.body).to.equal("secret of the operator's network");
  });
});
