import { expect } from "chai";
import { jsonDeeperThan, jsonTextValues, tooDeepMessage } from "../protocol/json";

/** `depth` levels of arrays (or objects, alternating when `mixed`), around `inner`. */
function nested(depth: number, inner: unknown = 1, mixed = false): unknown {
  let v = inner;
  for (let i = 0; i < depth; i++) v = mixed && i % 2 ? { k: v } : [v];
  return v;
}

describe("protocol/json: the bounds every JSON input is measured by", function () {
  describe("jsonDeeperThan", function () {
    it("counts a scalar as depth 0 and each array or object as one level, at the exact boundary", function () {
      for (const scalar of [null, 1, "s", true]) expect(jsonDeeperThan(scalar, 0), String(scalar)).to.equal(false);
      expect(jsonDeeperThan([], 0)).to.equal(true);
      expect(jsonDeeperThan({}, 0)).to.equal(true);
      expect(jsonDeeperThan([], 1)).to.equal(false);
      for (const mixed of [false, true]) {
        expect(jsonDeeperThan(nested(64, 1, mixed), 64), `64 levels, mixed ${mixed}`).to.equal(false);
        expect(jsonDeeperThan(nested(65, 1, mixed), 64), `65 levels, mixed ${mixed}`).to.equal(true);
      }
    });

    it("finds the deep branch wherever it is among shallow siblings, and null is not a level", function () {
      expect(jsonDeeperThan([1, null, "x", nested(3)], 3)).to.equal(true);
      expect(jsonDeeperThan([nested(3), 1, null], 4)).to.equal(false);
      expect(jsonDeeperThan({ a: null, b: { c: null } }, 2)).to.equal(false);
      expect(jsonDeeperThan({ a: 1, b: { c: { d: [] } } }, 3)).to.equal(true);
      expect(jsonDeeperThan([[null], [[null]]], 2)).to.equal(true);
    });

    it("measures 100,000 levels without recursion", function () {
      const deep = JSON.parse("[".repeat(1e5) + "]".repeat(1e5));
      expect(jsonDeeperThan(deep, 64)).to.equal(true);
      expect(jsonDeeperThan(deep, 1e5)).to.equal(false);
    });
  });

  describe("jsonTextValues", function () {
    it("counts 1 plus every comma and opening bracket outside strings", function () {
      expect(jsonTextValues("1", 10)).to.equal(1);
      expect(jsonTextValues("[1,2,3]", 10)).to.equal(4);
      expect(jsonTextValues('{"a":1,"b":[2]}', 10)).to.equal(4);
      expect(jsonTextValues("[[],[]]", 10)).to.equal(5);
    });

    it("skips strings, whatever they hold, and ends a string only at an unescaped quote", function () {
      expect(jsonTextValues('"[,{"', 10)).to.equal(1);
      expect(jsonTextValues('["a\\"[,{"]', 10)).to.equal(2); // an escaped quote does not end the string
      expect(jsonTextValues('["a\\\\",[1]]', 10)).to.equal(4); // an escaped backslash does not escape the quote
      expect(jsonTextValues('["a\\\\\\"[",1]', 10)).to.equal(3); // three backslashes: the quote is escaped
      expect(jsonTextValues('{"a,[{":"\\",",":["\\"[,{"]}', 10)).to.equal(3);
    });

    it("stops at an unterminated string (JSON.parse refuses the text anyway)", function () {
      expect(jsonTextValues('[1,"abc,[,[', 10)).to.equal(3);
    });

    it("gives up past the bound, answering max + 1", function () {
      expect(jsonTextValues("[[],[],[],[]]", 3)).to.equal(4);
      expect(jsonTextValues("[1,2,3]", 3)).to.equal(4);
      expect(jsonTextValues("[1,2,3]", 4)).to.equal(4);
      expect(jsonTextValues("[],".repeat(1e6), 64)).to.equal(65);
    });
  });

  it("says what was too deep and the limit", function () {
    expect(tooDeepMessage("js_params", 64)).to.equal("js_params nests arrays or objects more than 64 levels deep (the limit is 64)");
  });
});
