// Guest module: helpers shared by the other guest modules, around the raw host functions (`raw`,
// built by ../process/guest-bindings.ts and never reachable from a global).
(function (raw) {
  "use strict";
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  function toJson(value, what) {
    let json;
    try {
      json = stringify(value === undefined ? null : value);
    } catch (e) {
      throw new TypeError(`${what} is not JSON-serializable: ${e && e.message}`);
    }
    if (json === undefined) throw new TypeError(`${what} is not JSON-serializable`);
    return json;
  }
  return {
    host: raw,
    parse,
    stringify,
    toJson,
    call: (op, args) => raw.call(op, stringify(args || {})).then(parse),
    opts: (o) => (o !== null && typeof o === "object" ? o : {}),
    load: (name) => raw.load(name),
  };
})
