import crypto from "node:crypto";
import { expect } from "chai";
import { IdentityStore } from "../relayer/identity/store";
import { IDENTITY_SCHEMA } from "../relayer/identity/storeSchema";
import { Storage } from "../storage";
import { STORES, tempStore } from "./helpers/postgres";

/**
 * The identity store as two replicas see it: two stores open on one database (PostgreSQL, or one
 * SQLite file). What one keeps, the other sees; single use holds across them, under races.
 */
for (const store of STORES) {
  describe(`identity store on ${store}: shared by replicas, single use under races (issue 21)`, function () {
    this.timeout(60_000);
    let a: IdentityStore;
    let b: IdentityStore;
    let drop: () => Promise<void>;
    before(async function () {
      const t = await tempStore(this, store, "identity.sqlite");
      drop = t.drop;
      a = await IdentityStore.open(t.where);
      // PostgreSQL: two replicas, each its own pool. A SQLite file belongs to one process (one store): its races are that store's.
      b = store === "PostgreSQL" ? await IdentityStore.open(t.where) : a;
      for (const s of [a, b]) s.useLinkMac(async (fields) => crypto.createHmac("sha256", "test key").update(fields).digest("base64url"));
    });
    after(async () => {
      await a?.close();
      if (b !== a) await b?.close();
      await drop?.();
    });

    it("a pending thing kept by one replica is taken once by another; ten racing takes admit exactly one", async () => {
      await a.put("webauthn", "authenticate:c1", "{}", Date.now() + 60_000, "c");
      const takes = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).take("webauthn", "authenticate:c1")));
      expect(takes.filter((t) => t !== undefined)).to.deep.equal(["{}"]);
      expect(await a.take("webauthn", "authenticate:c1")).to.equal(undefined);
    });

    it("an expired thing is never taken, and the sweep deletes it", async () => {
      const now = Date.now();
      await a.put("email", "x@example.com", "h", now + 1000, "c", now);
      expect(await b.take("email", "x@example.com", now + 1000)).to.equal(undefined);
      await b.sweep(now + 1000);
      expect(await a.peek("email", "x@example.com", now)).to.equal(undefined);
    });

    it("a used nonce marked on one replica is refused on the other; ten racing marks admit one; it is free again once expired", async () => {
      const now = Date.now();
      const marks = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).once("oidc-nonce", "n1", now + 5000, now)));
      expect(marks.filter(Boolean)).to.have.length(1);
      expect(await b.once("oidc-nonce", "n1", now + 5000, now + 4000)).to.equal(false);
      expect(await b.once("oidc-nonce", "n1", now + 20_000, now + 6000)).to.equal(true);
    });

    it("a code taken with its HMAC only: a replaced code's HMAC takes nothing; guesses are spent across replicas up to the limit, and no more", async () => {
      const now = Date.now();
      await a.put("email", "y@example.com", "old", now + 60_000, "c", now);
      await b.put("email", "y@example.com", "new", now + 60_000, "c", now);
      expect(await a.take("email", "y@example.com", now, "old")).to.equal(undefined);
      const guesses = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).spendGuess("email", "y@example.com", "new", 5, now)));
      expect(guesses.filter((g) => g !== undefined).sort()).to.deep.equal([1, 2, 3, 4, 5]);
      expect(await a.spendGuess("email", "y@example.com", "new", 5, now), "none left after the fifth").to.equal(undefined);
    });

    it("the hourly send budget of a mailbox holds across replicas racing", async () => {
      const now = Date.now();
      const spends = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).spendSend("box@example.com", `c${i}`, { perHour: 3, perClient: 3 }, now)));
      expect(spends.filter((s) => s === undefined)).to.have.length(3);
      expect(spends.filter((s) => s !== undefined).every((s) => s!.spent === "mailbox" && s!.retry > 3590)).to.equal(true);
    });

    it("one client's share of a mailbox's budget holds across replicas racing; other clients still spend the rest, then the mailbox's budget holds", async () => {
      const now = Date.now();
      const budget = { perHour: 5, perClient: 3 };
      const spends = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).spendSend("shared@example.com", "stranger", budget, now)));
      expect(spends.filter((s) => s === undefined)).to.have.length(3);
      expect(spends.filter((s) => s !== undefined).every((s) => s!.spent === "client" && s!.retry > 3590)).to.equal(true);
      expect(await a.spendSend("shared@example.com", "owner", budget, now)).to.equal(undefined);
      expect(await b.spendSend("shared@example.com", "owner", budget, now)).to.equal(undefined);
      expect(await a.spendSend("shared@example.com", "third", budget, now)).to.deep.include({ spent: "mailbox" });
      expect(await b.spendSend("other@example.com", "stranger", budget, now), "another mailbox: a share of its own").to.equal(undefined);
    });

    it("a refused send waits until the oldest send of the budget it hit is an hour old", async () => {
      const now = Date.now();
      const budget = { perHour: 3, perClient: 2 };
      expect(await a.spendSend("wait@example.com", "c1", budget, now - 1_000_000)).to.equal(undefined);
      expect(await a.spendSend("wait@example.com", "c1", budget, now - 500_000)).to.equal(undefined);
      expect(await b.spendSend("wait@example.com", "c1", budget, now)).to.deep.equal({ spent: "client", retry: 2600 });
      expect(await b.spendSend("wait@example.com", "c2", budget, now - 200_000)).to.equal(undefined);
      expect(await a.spendSend("wait@example.com", "c3", budget, now)).to.deep.equal({ spent: "mailbox", retry: 2600 });
      expect(await a.spendSend("wait@example.com", "c1", budget, now + 2_600_001), "an hour after its first send, the client's share has room again").to.equal(undefined);
    });

    it("a refusal by both budgets waits for the later: at the time it names, the send fits (review finding: it named the mailbox's only)", async () => {
      const t0 = Date.now() - 200_000;
      const budget = { perHour: 4, perClient: 2 };
      for (const [client, at] of [["other", t0], ["other", t0 + 1000], ["me", t0 + 120_000], ["me", t0 + 121_000]] as const) expect(await a.spendSend("both@example.com", client, budget, at)).to.equal(undefined);
      const refused = await b.spendSend("both@example.com", "me", budget, t0 + 130_000);
      expect(refused).to.deep.equal({ spent: "mailbox", retry: 3590 }); // the mailbox has room at t0 + 1 h, this client's share only at t0 + 1 h + 120 s
      expect(await a.spendSend("both@example.com", "me", budget, t0 + 130_000 + refused!.retry * 1000 - 1000), "a second before").to.deep.include({ spent: "client" });
      expect(await a.spendSend("both@example.com", "me", budget, t0 + 130_000 + refused!.retry * 1000)).to.equal(undefined);
    });

    it("racing puts of one client never hold more than its limit of pending things, on one replica or two (review finding: 60 racing puts held 60)", async () => {
      const now = Date.now();
      const keys = Array.from({ length: 60 }, (_, i) => `race${i}@example.com\nracer`);
      const results = await Promise.allSettled(keys.map((k, i) => (i % 2 ? a : b).put("email", k, crypto.randomUUID(), now + 600_000, "racer", now)));
      const held = (await Promise.all(keys.map((k) => a.peek("email", k, now)))).filter(Boolean).length;
      expect(held).to.equal(a.limits.perClient);
      expect(results.filter((r) => r.status === "fulfilled")).to.have.length(a.limits.perClient);
      expect(results.filter((r) => r.status === "rejected").every((r) => (r as PromiseRejectedResult).reason.code === "rate_limited")).to.equal(true);
    });

    it("a database of before 0003 (sends without their client) is migrated at open: its sends count against the mailbox's budget, no client's share", async function () {
      const t = await tempStore(this, store, "identity.sqlite");
      try {
        const { "0001_initial": initial, "0002_epochs_and_clients": epochs } = IDENTITY_SCHEMA.steps;
        const old = await Storage.open<any>(t.where, { name: IDENTITY_SCHEMA.name, steps: { "0001_initial": initial, "0002_epochs_and_clients": epochs } });
        const now = Date.now();
        await old.db.insertInto("identity_sends").values({ id: "old-send", mailbox: "old@example.com", sent_at: now - 1000 }).execute();
        await old.close();
        const s = await IdentityStore.open(t.where);
        try {
          const budget = { perHour: 2, perClient: 1 };
          expect(await s.spendSend("old@example.com", "c1", budget, now)).to.equal(undefined);
          expect(await s.spendSend("old@example.com", "c2", budget, now)).to.deep.include({ spent: "mailbox" });
        } finally {
          await s.close();
        }
      } finally {
        await t.drop();
      }
    });

    it("a passkey counter moves forward once for two racing assertions with one value", async () => {
      const now = Date.now();
      await a.addPasskey({ credential_id: "cred1", rp_id: "example.com", user_handle: "h", public_key: "k", counter: 4, transports: "[]", created_at: now, used_at: now, mac: "m" });
      expect(await b.addPasskey({ credential_id: "cred1", rp_id: "example.com", user_handle: "other", public_key: "k2", counter: 0, transports: "[]", created_at: now, used_at: now, mac: "m2" })).to.equal(false);
      const moves = await Promise.all([a.advanceCounter("cred1", 4, 5), b.advanceCounter("cred1", 4, 6)]);
      expect(moves.filter(Boolean)).to.have.length(1);
      expect((await a.passkey("cred1"))!.user_handle).to.equal("h");
    });

    it("two replicas unlinking an identity's two methods at once leave it one", async () => {
      await a.claim("email", "email", "p@example.com", "id-p");
      expect(await b.attach("oidc", "https://issuer", "p-sub", "id-p", async () => false)).to.equal("linked");
      const r = await Promise.all([a.detach("email", "email", "p@example.com", "id-p"), b.detach("oidc", "https://issuer", "p-sub", "id-p")]);
      expect(r.sort()).to.deep.equal(["last", "unlinked"]);
      expect((await a.links("id-p")).filter((l) => !l.unlinked)).to.have.length(1);
    });

    it("an unlink bumps the identity's session epoch on every replica; a link or unlink carrying the old epoch (a session revoked meanwhile) changes nothing", async () => {
      await a.claim("email", "email", "q@example.com", "id-q");
      expect(await a.attach("oidc", "https://issuer", "q-sub", "id-q", async () => false, { epoch: 0 })).to.equal("linked");
      expect(await a.attach("oidc", "https://issuer", "q-2", "id-q", async () => false, { epoch: 0 })).to.equal("linked");
      expect(await b.epoch("id-q")).to.equal(0);
      expect(await b.detach("oidc", "https://issuer", "q-sub", "id-q", 0)).to.equal("unlinked");
      expect([await a.epoch("id-q"), await b.epoch("id-q")]).to.deep.equal([1, 1]);
      const before = await a.links("id-q");
      expect(await a.attach("oidc", "https://issuer", "mallory", "id-q", async () => false, { epoch: 0 })).to.equal("revoked");
      expect(await b.detach("oidc", "https://issuer", "q-2", "id-q", 0)).to.equal("revoked");
      expect(await a.links("id-q")).to.deep.equal(before);
      expect(await a.epoch("id-q")).to.equal(1);
    });
  });
}
