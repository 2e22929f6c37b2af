import { expect } from "chai";
import { buildSiweMessage, parseSiweMessage, SiweFormatError } from "../protocol/siwe";

const ADDRESS = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";
const good = buildSiweMessage("CreateWallet", { host: "localhost:3000", address: ADDRESS, chainId: 31337, issuedAt: 1_700_000_000 });
const lines = good.split("\n");
const withLine = (i: number, line: string) => lines.map((l, j) => (j === i ? line : l)).join("\n");

/** The refusal `message` gets: its message exactly. */
function refusal(message: string): string {
  try {
    parseSiweMessage(message);
  } catch (err) {
    expect(err).to.be.instanceOf(SiweFormatError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${JSON.stringify(message)}`);
}

describe("protocol/siwe: the SDK's signed text, read strictly", function () {
  it("reads the five lines of the SDK's message, for each purpose", function () {
    expect(parseSiweMessage(good)).to.deep.equal({ host: "localhost:3000", purpose: "CreateWallet", address: ADDRESS, chainId: 31337n, issuedAt: 1_700_000_000n });
    const convert = buildSiweMessage("ConvertAccount", { host: "lit", address: ADDRESS.toLowerCase(), chainId: 1, issuedAt: 5 });
    expect(parseSiweMessage(convert)).to.deep.equal({ host: "lit", purpose: "ConvertAccount", address: ADDRESS, chainId: 1n, issuedAt: 5n });
    // the longest host, the largest numbers the patterns take
    const long = buildSiweMessage("CreateWallet", { host: "a".repeat(255), address: ADDRESS, chainId: "9".repeat(20) as unknown as number, issuedAt: 999_999_999_999_999 });
    expect(parseSiweMessage(long)).to.include({ host: "a".repeat(255), chainId: BigInt("9".repeat(20)), issuedAt: 999_999_999_999_999n });
  });

  const layout = 'the message must be "<host> wants you to <statement>", an empty line, then the Address, Chain ID and Issued At lines, and nothing else';
  const hostRule = "the host must be a host name (letters, digits, . - : [ ]), at most 255 characters";
  const rows: [string, string, string][] = [
    ["a CR anywhere", good.replace("\n\n", "\r\n\n"), "lines end with \\n only"],
    ["a sixth line", `${good}\nResources: x`, layout],
    ["four lines", lines.slice(0, 4).join("\n"), layout],
    ["no empty second line", withLine(1, "x"), layout],
    ["no ' wants you to '", withLine(0, "localhost:3000 asks you to create a new wallet for ChainSecured account."), 'the first line must read "<host> wants you to <statement>"'],
    ["an empty host", withLine(0, lines[0].replace("localhost:3000", "")), hostRule],
    ["a host of 256 characters", withLine(0, lines[0].replace("localhost:3000", "a".repeat(256))), hostRule],
    ["a host with a space", withLine(0, lines[0].replace("localhost:3000", "evil host")), hostRule],
    ["a host with a slash", withLine(0, lines[0].replace("localhost:3000", "evil/x")), hostRule],
    ["another statement", withLine(0, "localhost:3000 wants you to sign in."), 'the statement must be one of: "create a new wallet for ChainSecured account.", "take admin ownership of this account."'],
    ["the Address line missing", withLine(2, `Adress: ${ADDRESS}`), 'the message\'s line "Address: ..." is missing or out of place'],
    ["an address with a prefix", withLine(2, `Address: x${ADDRESS}`), "Address must be a 0x-prefixed 20-byte address"],
    ["an address with a suffix", withLine(2, `Address: ${ADDRESS}0`), "Address must be a 0x-prefixed 20-byte address"],
    ["a bad checksum", withLine(2, `Address: ${ADDRESS.replace("bD", "Bd")}`), "Address is not a valid address (bad checksum?)"],
    ["the Chain ID line out of place", [lines[0], lines[1], lines[2], lines[4], lines[3]].join("\n"), 'the message\'s line "Chain ID: ..." is missing or out of place'],
    ["a chain id with a prefix", withLine(3, "Chain ID: x31337"), "Chain ID must be a decimal chain id"],
    ["a chain id with a suffix", withLine(3, "Chain ID: 31337x"), "Chain ID must be a decimal chain id"],
    ["a chain id of 21 digits", withLine(3, `Chain ID: ${"1".repeat(21)}`), "Chain ID must be a decimal chain id"],
    ["an issued-at in ISO form", withLine(4, "Issued At: 2026-11-24T00:00:00Z"), "Issued At must be unix seconds (decimal)"],
    ["an issued-at of 16 digits", withLine(4, `Issued At: ${"1".repeat(16)}`), "Issued At must be unix seconds (decimal)"],
  ];
  for (const [what, message, why] of rows) {
    it(`refuses ${what}: ${why}`, function () {
      expect(refusal(message)).to.equal(why);
    });
  }
});
