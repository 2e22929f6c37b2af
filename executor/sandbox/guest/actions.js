// Guest module: the Lit namespace as Chipotle has it: LitActions (Lit.Actions, and the neutral
// alias Actions), LitAuth (Lit.Auth, an empty array as Chipotle's HTTP path gives it) and LitHeaders (Lit.Headers:
// a Headers of the request's x-request-id and x-correlation-id, as Chipotle fills it), frozen. Privileged operations are host calls answered by
// the host, which re-checks permissions; the sandbox counts them against the limits.
(function (lib) {
  "use strict";
  const { call, opts, host, toJson } = lib;
  // A string argument; `check`: "blank" refuses one that is empty or all white space, "empty" an
  // empty one, with Chipotle's RangeError ("pkpId must not be blank").
  function str(fn, name, value, check) {
    if (typeof value !== "string") throw new TypeError(`${fn}: ${name} must be a string`);
    if ((check === "blank" && value.trim() === "") || (check === "empty" && value === "")) {
      throw new RangeError(`${name} must not be ${check}`);
    }
    return value;
  }
  // A string response is JSON when it parses as JSON (Chipotle's server parses it), else the string itself.
  function responseJson(value) {
    if (typeof value !== "string") return toJson(value, "setResponse's response");
    try {
      lib.parse(value);
      return value;
    } catch {
      return toJson(value, "setResponse's response");
    }
  }
  const optionalId = (fn, o) => (o.ipfsId === undefined ? {} : { ipfsId: str(fn, "ipfsId", o.ipfsId, "blank") });
  const Actions = Object.freeze({
    async getPrivateKey(o) {
      return call("getPrivateKey", { pkpId: str("getPrivateKey", "pkpId", opts(o).pkpId, "blank") });
    },
    async getLitActionPrivateKey() {
      return call("getLitActionPrivateKey");
    },
    // 0x + the 33-byte compressed SEC1 key, as Chipotle answers.
    async getLitActionPublicKey(o) {
      return call("getLitActionPublicKey", optionalId("getLitActionPublicKey", opts(o)));
    },
    async getLitActionWalletAddress(o) {
      return call("getLitActionWalletAddress", optionalId("getLitActionWalletAddress", opts(o)));
    },
    async Encrypt(o) {
      o = opts(o);
      return call("encrypt", { pkpId: str("Encrypt", "pkpId", o.pkpId, "blank"), message: str("Encrypt", "message", o.message, "blank") });
    },
    async Decrypt(o) {
      o = opts(o);
      return call("decrypt", { pkpId: str("Decrypt", "pkpId", o.pkpId, "blank"), ciphertext: str("Decrypt", "ciphertext", o.ciphertext, "empty") });
    },
    // setResponse({response}) or setResponse(value); the last call wins, and main's return value (when it returns one) over it, as on Chipotle.
    setResponse(arg) {
      const wrapped = arg !== null && typeof arg === "object" && !Array.isArray(arg) && Object.prototype.hasOwnProperty.call(arg, "response");
      host.setResponse(responseJson(wrapped ? arg.response : arg));
      return null; // what Chipotle's op answers (its runtime test logs [ "456", null ] for Promise.all of a Decrypt and a setResponse)
    },
    // The JSON-RPC URL of a chain the deployment is configured for (Datil's getRpcUrl; the names: GET /get_node_chain_config's chain_name and VESTA_ACTION_RPC_URLS).
    async getRpcUrl(o) {
      return call("getRpcUrl", { chain: str("getRpcUrl", "chain", opts(o).chain, "blank") });
    },
    // The modules the action imported, with their integrity hashes ([{url, hash: "sha384-..."}]),
    // also written to the logs, as Chipotle does.
    showImportDetails() {
      const details = lib.parse(host.info("imports"));
      host.log(`[Import Details]\n${lib.stringify(details, null, 2)}`);
      return details;
    },
  });
  const LitAuth = Object.freeze([]); // what Chipotle's HTTP path gives (an empty auth context)
  // The run's headers are read when a run first asks for them: this module is compiled in the warm
  // context (before any run), whose memory every run starts from, so these start empty each run.
  let headers;
  let lit;
  const litHeaders = () => (headers ??= new (lib.load("http").Headers)(lib.parse(host.info("headers"))));
  return {
    Actions,
    LitActions: Actions,
    LitAuth,
    get LitHeaders() {
      return litHeaders();
    },
    get Lit() {
      return (lit ??= Object.freeze({ Actions, Auth: LitAuth, Headers: litHeaders() }));
    },
  };
})
