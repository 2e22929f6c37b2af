import { loadFixture } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { expect } from "chai";
import { ethers, ignition } from "hardhat";
import type { ModuleParameters } from "@nomicfoundation/ignition-core";
import type { Interface } from "ethers";

import AppAuthModule from "../ignition/modules/AppAuth";
import {
  IAppAuthBasicManagement__factory,
  IAppAuthPolicy__factory,
  IAppAuth__factory,
  IERC165__factory,
  Ownable2Step__factory,
  type AppAuth,
} from "../typechain-types";
import type { IAppAuth } from "../typechain-types/contracts/AppAuth";

// dstack's ERC-165 ids (Dstack-TEE/dstack, kms/auth-eth/contracts: DstackApp.supportsInterface).
const DSTACK_APP_AUTH_ID = "0x1e079198";
const DSTACK_APP_AUTH_BASIC_MANAGEMENT_ID = "0x8fd37527";
const ERC165_ID = "0x01ffc9a7";

const COMPOSE_A = ethers.id("compose-a");
const COMPOSE_B = ethers.id("compose-b");
const DEVICE_A = ethers.id("device-a");
const DEVICE_B = ethers.id("device-b");
const OTHER_APP_ID = "0x00000000000000000000000000000000000000aa";

/** The ERC-165 id of the functions `iface` declares itself (those of `inherited` left out). */
function interfaceId(iface: Interface, ...inherited: Interface[]): string {
  const skip = new Set(inherited.flatMap((base) => base.fragments.map((f) => f.format("sighash"))));
  let id = 0;
  iface.forEachFunction((fn) => {
    if (!skip.has(fn.format("sighash"))) id ^= Number.parseInt(fn.selector.slice(2), 16);
  });
  return ethers.toBeHex(id >>> 0, 4);
}

async function deploy(parameters: ModuleParameters): Promise<AppAuth> {
  const { appAuth } = await ignition.deploy(AppAuthModule, { parameters: { AppAuthModule: parameters } });
  return appAuth as unknown as AppAuth;
}

/** Expects `call` to revert because `caller` is not the owner (or, for acceptOwnership, the pending owner). */
function expectNotOwner(call: Promise<unknown>, appAuth: AppAuth, caller: { address: string }) {
  return expect(call).to.be.revertedWithCustomError(appAuth, "OwnableUnauthorizedAccount").withArgs(caller.address);
}

describe("AppAuth", function () {
  async function deployAppAuthFixture() {
    const [deployer, owner, newOwner, stranger] = await ethers.getSigners();
    // Production-like: a separate owner, one allowed image, devices restricted to an allow-list.
    const appAuth = await deploy({ owner: owner.address, initialComposeHashes: [COMPOSE_A], allowAnyDevice: false });
    await appAuth.connect(owner).addDevice(DEVICE_A);
    const withDefaults = await deploy({});
    const withAppId = await deploy({ appId: OTHER_APP_ID });
    return { appAuth, withDefaults, withAppId, deployer, owner, newOwner, stranger };
  }

  async function bootInfo(
    appAuth: AppAuth,
    overrides: Partial<IAppAuth.AppBootInfoStruct> = {},
  ): Promise<IAppAuth.AppBootInfoStruct> {
    return {
      appId: await appAuth.getAddress(),
      composeHash: COMPOSE_A,
      instanceId: ethers.Wallet.createRandom().address,
      deviceId: DEVICE_A,
      mrAggregated: ethers.id("mr-aggregated"),
      mrSystem: ethers.id("mr-system"),
      osImageHash: ethers.id("os-image"),
      tcbStatus: "UpToDate",
      advisoryIds: [],
      ...overrides,
    };
  }

  describe("constructor", function () {
    it("sets the owner, the app id, the initial compose hashes and the device switch", async function () {
      const { appAuth, owner } = await loadFixture(deployAppAuthFixture);
      expect(await appAuth.owner()).to.equal(owner.address);
      expect(await appAuth.appId()).to.equal(await appAuth.getAddress());
      expect(await appAuth.allowedComposeHashes(COMPOSE_A)).to.equal(true);
      expect(await appAuth.allowedComposeHashes(COMPOSE_B)).to.equal(false);
      expect(await appAuth.allowAnyDevice()).to.equal(false);
      expect(await appAuth.requireTcbUpToDate()).to.equal(false);
    });

    it("emits ComposeHashAdded for each initial compose hash and AllowAnyDeviceSet", async function () {
      const { appAuth } = await loadFixture(deployAppAuthFixture);
      const added = await appAuth.queryFilter(appAuth.filters.ComposeHashAdded());
      expect(added.map((e) => e.args.composeHash)).to.deep.equal([COMPOSE_A]);
      const switched = await appAuth.queryFilter(appAuth.filters.AllowAnyDeviceSet());
      expect(switched.map((e) => e.args.allowAny)).to.deep.equal([false]);
    });

    it("uses the module defaults: account 0 as owner, no compose hash, any device", async function () {
      const { withDefaults, deployer } = await loadFixture(deployAppAuthFixture);
      expect(await withDefaults.owner()).to.equal(deployer.address);
      expect(await withDefaults.appId()).to.equal(await withDefaults.getAddress());
      expect(await withDefaults.allowedComposeHashes(COMPOSE_A)).to.equal(false);
      expect(await withDefaults.allowAnyDevice()).to.equal(true);
    });

    it("keeps an explicit app id", async function () {
      const { withAppId } = await loadFixture(deployAppAuthFixture);
      expect(await withAppId.appId()).to.equal(ethers.getAddress(OTHER_APP_ID));
    });

    it("reverts when the owner is the zero address", async function () {
      const factory = await ethers.getContractFactory("AppAuth");
      await expect(factory.deploy(ethers.ZeroAddress, ethers.ZeroAddress, [], true))
        .to.be.revertedWithCustomError(factory, "OwnableInvalidOwner")
        .withArgs(ethers.ZeroAddress);
    });

    it("reverts when an initial compose hash is zero", async function () {
      const { owner } = await loadFixture(deployAppAuthFixture);
      const factory = await ethers.getContractFactory("AppAuth");
      await expect(
        factory.deploy(owner.address, ethers.ZeroAddress, [COMPOSE_A, ethers.ZeroHash], true),
      ).to.be.revertedWithCustomError(factory, "ZeroComposeHash");
    });

    it("reverts when an initial compose hash is repeated", async function () {
      const { owner } = await loadFixture(deployAppAuthFixture);
      const factory = await ethers.getContractFactory("AppAuth");
      await expect(factory.deploy(owner.address, ethers.ZeroAddress, [COMPOSE_A, COMPOSE_A], true))
        .to.be.revertedWithCustomError(factory, "ComposeHashAlreadyAllowed")
        .withArgs(COMPOSE_A);
    });
  });

  // The two allow-lists behave alike; one table drives the tests of both.
  const allowLists = [
    {
      what: "compose hash",
      add: "addComposeHash",
      remove: "removeComposeHash",
      view: "allowedComposeHashes",
      addedEvent: "ComposeHashAdded",
      removedEvent: "ComposeHashRemoved",
      zeroError: "ZeroComposeHash",
      presentError: "ComposeHashAlreadyAllowed",
      absentError: "ComposeHashNotAllowed",
      present: COMPOSE_A,
      absent: COMPOSE_B,
    },
    {
      what: "device id",
      add: "addDevice",
      remove: "removeDevice",
      view: "allowedDeviceIds",
      addedEvent: "DeviceAdded",
      removedEvent: "DeviceRemoved",
      zeroError: "ZeroDeviceId",
      presentError: "DeviceAlreadyAllowed",
      absentError: "DeviceNotAllowed",
      present: DEVICE_A,
      absent: DEVICE_B,
    },
  ] as const;

  for (const list of allowLists) {
    async function listFixture() {
      const fixture = await loadFixture(deployAppAuthFixture);
      const asOwner = fixture.appAuth.connect(fixture.owner);
      const asStranger = fixture.appAuth.connect(fixture.stranger);
      const isAllowed = (value: string) => fixture.appAuth.getFunction(list.view)(value);
      return { ...fixture, asOwner, asStranger, isAllowed };
    }

    describe(list.add, function () {
      it(`allows the ${list.what} and emits ${list.addedEvent}`, async function () {
        const { appAuth, asOwner, isAllowed } = await listFixture();
        await expect(asOwner.getFunction(list.add)(list.absent))
          .to.emit(appAuth, list.addedEvent)
          .withArgs(list.absent);
        expect(await isAllowed(list.absent)).to.equal(true);
      });

      it(`reverts when the ${list.what} is zero`, async function () {
        const { appAuth, asOwner, isAllowed } = await listFixture();
        await expect(asOwner.getFunction(list.add)(ethers.ZeroHash)).to.be.revertedWithCustomError(
          appAuth,
          list.zeroError,
        );
        expect(await isAllowed(ethers.ZeroHash)).to.equal(false);
      });

      it(`reverts when the ${list.what} is already allowed`, async function () {
        const { appAuth, asOwner, isAllowed } = await listFixture();
        await expect(asOwner.getFunction(list.add)(list.present))
          .to.be.revertedWithCustomError(appAuth, list.presentError)
          .withArgs(list.present);
        expect(await isAllowed(list.present)).to.equal(true);
      });

      it("reverts when the caller is not the owner", async function () {
        const { appAuth, asStranger, stranger, isAllowed } = await listFixture();
        await expectNotOwner(asStranger.getFunction(list.add)(list.absent), appAuth, stranger);
        expect(await isAllowed(list.absent)).to.equal(false);
      });
    });

    describe(list.remove, function () {
      it(`removes the ${list.what} and emits ${list.removedEvent}`, async function () {
        const { appAuth, asOwner, isAllowed } = await listFixture();
        await expect(asOwner.getFunction(list.remove)(list.present))
          .to.emit(appAuth, list.removedEvent)
          .withArgs(list.present);
        expect(await isAllowed(list.present)).to.equal(false);
      });

      it(`reverts when the ${list.what} is not allowed`, async function () {
        const { appAuth, asOwner, isAllowed } = await listFixture();
        await expect(asOwner.getFunction(list.remove)(list.absent))
          .to.be.revertedWithCustomError(appAuth, list.absentError)
          .withArgs(list.absent);
        expect(await isAllowed(list.absent)).to.equal(false);
      });

      it("reverts when the caller is not the owner", async function () {
        const { appAuth, asStranger, stranger, isAllowed } = await listFixture();
        await expectNotOwner(asStranger.getFunction(list.remove)(list.present), appAuth, stranger);
        expect(await isAllowed(list.present)).to.equal(true);
      });
    });
  }

  // The two switches behave alike; one table drives the tests of both. Both start off.
  const switches = [
    { set: "setAllowAnyDevice", view: "allowAnyDevice", event: "AllowAnyDeviceSet", unchanged: "AllowAnyDeviceUnchanged" },
    {
      set: "setRequireTcbUpToDate",
      view: "requireTcbUpToDate",
      event: "RequireTcbUpToDateSet",
      unchanged: "RequireTcbUpToDateUnchanged",
    },
  ] as const;

  for (const flag of switches) {
    describe(flag.set, function () {
      it(`turns ${flag.view} on and off and emits ${flag.event}`, async function () {
        const { appAuth, owner } = await loadFixture(deployAppAuthFixture);
        const set = appAuth.connect(owner).getFunction(flag.set);
        await expect(set(true)).to.emit(appAuth, flag.event).withArgs(true);
        expect(await appAuth.getFunction(flag.view)()).to.equal(true);
        await expect(set(false)).to.emit(appAuth, flag.event).withArgs(false);
        expect(await appAuth.getFunction(flag.view)()).to.equal(false);
      });

      it("reverts when the value is unchanged", async function () {
        const { appAuth, owner } = await loadFixture(deployAppAuthFixture);
        await expect(appAuth.connect(owner).getFunction(flag.set)(false))
          .to.be.revertedWithCustomError(appAuth, flag.unchanged)
          .withArgs(false);
        expect(await appAuth.getFunction(flag.view)()).to.equal(false);
      });

      it("reverts when the caller is not the owner", async function () {
        const { appAuth, stranger } = await loadFixture(deployAppAuthFixture);
        await expectNotOwner(appAuth.connect(stranger).getFunction(flag.set)(true), appAuth, stranger);
        expect(await appAuth.getFunction(flag.view)()).to.equal(false);
      });
    });
  }

  describe("isAppAllowed", function () {
    async function check(appAuth: AppAuth, overrides: Partial<IAppAuth.AppBootInfoStruct> = {}) {
      const [isAllowed, reason] = await appAuth.isAppAllowed(await bootInfo(appAuth, overrides));
      return { isAllowed, reason };
    }

    it("allows an allowed compose hash on an allowed device", async function () {
      const { appAuth } = await loadFixture(deployAppAuthFixture);
      expect(await check(appAuth)).to.deep.equal({ isAllowed: true, reason: "" });
    });

    it("rejects another app id", async function () {
      const { appAuth } = await loadFixture(deployAppAuthFixture);
      expect(await check(appAuth, { appId: OTHER_APP_ID })).to.deep.equal({
        isAllowed: false,
        reason: "App id mismatch",
      });
    });

    it("accepts the explicit app id given at deployment, and not the contract's address", async function () {
      const { withAppId } = await loadFixture(deployAppAuthFixture);
      await withAppId.addComposeHash(COMPOSE_A);
      expect(await check(withAppId, { appId: OTHER_APP_ID })).to.deep.equal({ isAllowed: true, reason: "" });
      expect((await check(withAppId)).reason).to.equal("App id mismatch");
    });

    it("rejects a compose hash that is not allowed", async function () {
      const { appAuth } = await loadFixture(deployAppAuthFixture);
      expect(await check(appAuth, { composeHash: COMPOSE_B })).to.deep.equal({
        isAllowed: false,
        reason: "Compose hash not allowed",
      });
    });

    it("rejects a compose hash once it is removed", async function () {
      const { appAuth, owner } = await loadFixture(deployAppAuthFixture);
      await appAuth.connect(owner).removeComposeHash(COMPOSE_A);
      expect((await check(appAuth)).reason).to.equal("Compose hash not allowed");
    });

    it("rejects a device that is not allowed while allowAnyDevice is off", async function () {
      const { appAuth } = await loadFixture(deployAppAuthFixture);
      expect(await check(appAuth, { deviceId: DEVICE_B })).to.deep.equal({
        isAllowed: false,
        reason: "Device not allowed",
      });
    });

    it("allows any device while allowAnyDevice is on", async function () {
      const { appAuth, owner } = await loadFixture(deployAppAuthFixture);
      await appAuth.connect(owner).setAllowAnyDevice(true);
      expect(await check(appAuth, { deviceId: DEVICE_B })).to.deep.equal({ isAllowed: true, reason: "" });
    });

    it("rejects a TCB status other than UpToDate while requireTcbUpToDate is on", async function () {
      const { appAuth, owner } = await loadFixture(deployAppAuthFixture);
      await appAuth.connect(owner).setRequireTcbUpToDate(true);
      expect(await check(appAuth, { tcbStatus: "OutOfDate", advisoryIds: ["INTEL-SA-00837"] })).to.deep.equal({
        isAllowed: false,
        reason: "TCB status is not up to date",
      });
      expect(await check(appAuth, { tcbStatus: "" })).to.deep.equal({
        isAllowed: false,
        reason: "TCB status is not up to date",
      });
      expect(await check(appAuth, { tcbStatus: "UpToDate" })).to.deep.equal({ isAllowed: true, reason: "" });
    });

    it("ignores the TCB status while requireTcbUpToDate is off", async function () {
      const { appAuth } = await loadFixture(deployAppAuthFixture);
      expect(await check(appAuth, { tcbStatus: "OutOfDate" })).to.deep.equal({ isAllowed: true, reason: "" });
    });
  });

  describe("supportsInterface", function () {
    it("computes dstack's IAppAuth id from the isAppAllowed selector", async function () {
      const ierc165 = IERC165__factory.createInterface();
      expect(interfaceId(IAppAuth__factory.createInterface(), ierc165)).to.equal(DSTACK_APP_AUTH_ID);
      expect(interfaceId(IAppAuthBasicManagement__factory.createInterface(), ierc165)).to.equal(
        DSTACK_APP_AUTH_BASIC_MANAGEMENT_ID,
      );
      expect(interfaceId(ierc165)).to.equal(ERC165_ID);
    });

    it("returns true for IAppAuth, IAppAuthBasicManagement, IAppAuthPolicy and IERC165", async function () {
      const { appAuth } = await loadFixture(deployAppAuthFixture);
      const policyId = interfaceId(
        IAppAuthPolicy__factory.createInterface(),
        IAppAuth__factory.createInterface(),
        IAppAuthBasicManagement__factory.createInterface(),
      );
      for (const id of [DSTACK_APP_AUTH_ID, DSTACK_APP_AUTH_BASIC_MANAGEMENT_ID, policyId, ERC165_ID]) {
        expect(await appAuth.supportsInterface(id), id).to.equal(true);
      }
    });

    it("returns false for other ids", async function () {
      const { appAuth } = await loadFixture(deployAppAuthFixture);
      const ownable2StepId = interfaceId(Ownable2Step__factory.createInterface());
      for (const id of ["0xffffffff", "0x00000000", ownable2StepId]) {
        expect(await appAuth.supportsInterface(id), id).to.equal(false);
      }
    });
  });

  describe("transferOwnership", function () {
    it("starts a transfer and emits OwnershipTransferStarted, leaving the owner in place", async function () {
      const { appAuth, owner, newOwner } = await loadFixture(deployAppAuthFixture);
      await expect(appAuth.connect(owner).transferOwnership(newOwner.address))
        .to.emit(appAuth, "OwnershipTransferStarted")
        .withArgs(owner.address, newOwner.address);
      expect(await appAuth.owner()).to.equal(owner.address);
      expect(await appAuth.pendingOwner()).to.equal(newOwner.address);
      await expectNotOwner(appAuth.connect(newOwner).addComposeHash(COMPOSE_B), appAuth, newOwner);
    });

    it("reverts when the caller is not the owner", async function () {
      const { appAuth, stranger } = await loadFixture(deployAppAuthFixture);
      await expectNotOwner(appAuth.connect(stranger).transferOwnership(stranger.address), appAuth, stranger);
      expect(await appAuth.pendingOwner()).to.equal(ethers.ZeroAddress);
    });
  });

  describe("acceptOwnership", function () {
    it("hands ownership to the pending owner and emits OwnershipTransferred", async function () {
      const { appAuth, owner, newOwner } = await loadFixture(deployAppAuthFixture);
      await appAuth.connect(owner).transferOwnership(newOwner.address);
      await expect(appAuth.connect(newOwner).acceptOwnership())
        .to.emit(appAuth, "OwnershipTransferred")
        .withArgs(owner.address, newOwner.address);
      expect(await appAuth.owner()).to.equal(newOwner.address);
      expect(await appAuth.pendingOwner()).to.equal(ethers.ZeroAddress);
      await expect(appAuth.connect(newOwner).addComposeHash(COMPOSE_B)).to.emit(appAuth, "ComposeHashAdded");
      await expectNotOwner(appAuth.connect(owner).removeComposeHash(COMPOSE_B), appAuth, owner);
    });

    it("reverts when the caller is not the pending owner", async function () {
      const { appAuth, owner, newOwner, stranger } = await loadFixture(deployAppAuthFixture);
      await appAuth.connect(owner).transferOwnership(newOwner.address);
      await expectNotOwner(appAuth.connect(stranger).acceptOwnership(), appAuth, stranger);
      expect(await appAuth.owner()).to.equal(owner.address);
      expect(await appAuth.pendingOwner()).to.equal(newOwner.address);
    });
  });

  describe("renounceOwnership", function () {
    it("reverts when the owner calls it", async function () {
      const { appAuth, owner } = await loadFixture(deployAppAuthFixture);
      await expect(appAuth.connect(owner).renounceOwnership()).to.be.revertedWithCustomError(
        appAuth,
        "RenounceOwnershipDisabled",
      );
      expect(await appAuth.owner()).to.equal(owner.address);
    });

    it("reverts when the caller is not the owner", async function () {
      const { appAuth, stranger } = await loadFixture(deployAppAuthFixture);
      await expectNotOwner(appAuth.connect(stranger).renounceOwnership(), appAuth, stranger);
    });
  });
});
