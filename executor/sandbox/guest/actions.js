// Guest module: Lit.Actions (and its neutral alias Actions). Privileged operations are host calls
// answered by the host, which re-checks permissions; the sandbox counts them against the limits.
(function (lib) {
  "use strict";
  const { call, opts, host, toJson } = lib;
  function str(fn, name, value, nonEmpty) {
    if (typeof value !== "string" || (nonEmpty && value === "")) {
      throw new TypeError(`${fn}: ${name} must be a ${nonEmpty ? "non-empty " : ""}string`);
    }
    return value;
  }
  const optionalId = (fn, o) => (o.ipfsId === undefined ? {} : { ipfsId: str(fn, "ipfsId", o.ipfsId, true) });
  const Actions = {
    async getPrivateKey(o) {
      return call("getPrivateKey", { pkpId: str("getPrivateKey", "pkpId", opts(o).pkpId, true) });
    },
    async getLitActionPrivateKey() {
      return call("getLitActionPrivateKey");
    },
    async getLitActionPublicKey(o) {
      return call("getLitActionPublicKey", optionalId("getLitActionPublicKey", opts(o)));
    },
    async getLitActionWalletAddress(o) {
      return call("getLitActionWalletAddress", optionalId("getLitActionWalletAddress", opts(o)));
    },
    async Encrypt(o) {
      o = opts(o);
      return call("encrypt", { pkpId: str("Encrypt", "pkpId", o.pkpId, true), message: str("Encrypt", "message", o.message) });
    },
    async Decrypt(o) {
      o = opts(o);
      return call("decrypt", { pkpId: str("Decrypt", "pkpId", o.pkpId, true), ciphertext: str("Decrypt", "ciphertext", o.ciphertext) });
    },
    // setResponse({response}) or setResponse(value); the last call wins over main's return value.
    setResponse(arg) {
      const wrapped = arg !== null && typeof arg === "object" && !Array.isArray(arg) && Object.prototype.hasOwnProperty.call(arg, "response");
      host.setResponse(toJson(wrapped ? arg.response : arg, "setResponse's response"));
    },
  };
  return { Actions, Lit: { Actions } };
})
