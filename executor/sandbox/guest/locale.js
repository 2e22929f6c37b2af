// Guest code, run once in the warm context (../process/context.ts), whose memory every run starts
// from: the locale-sensitive built-ins QuickJS has no ICU for (Number, BigInt and Date
// toLocaleString, Date toLocaleDateString and toLocaleTimeString, String localeCompare and
// toLocale{Upper,Lower}Case, Array and typed array toLocaleString) replaced by methods that load
// guest/intl-core.js on their first call in a run and answer as V8 with ICU does (Node's Intl in the
// sandbox process); a run that calls none of them compiles nothing. Date's toString and
// toTimeString add the time zone's name, as V8's do: the sandbox's time zone is always UTC
// (process/main.ts). The methods share two closures' code (each copy costs the snapshot bytes).
(function (load) {
  "use strict";
  // Kept for the rest of the run; the next run starts from the warm context, without it.
  let builtins;
  const impl = () => builtins || (builtins = load("intl-core").builtins);
  // Methods named and sized as the built-ins they replace (length 0, or 1 for localeCompare).
  const method = (name, which) => ({ [name]() { return impl()[which](this, arguments[0], arguments[1]); } })[name];
  const method1 = (name, which) => ({ [name](that) { return impl()[which](this, that, arguments[1], arguments[2]); } })[name];
  const put = (proto, name, fn) => Object.defineProperty(proto, name, { value: fn, writable: true, enumerable: false, configurable: true });
  put(Number.prototype, "toLocaleString", method("toLocaleString", "number"));
  put(BigInt.prototype, "toLocaleString", method("toLocaleString", "bigint"));
  put(Date.prototype, "toLocaleString", method("toLocaleString", "date"));
  put(Date.prototype, "toLocaleDateString", method("toLocaleDateString", "dateDate"));
  put(Date.prototype, "toLocaleTimeString", method("toLocaleTimeString", "dateTime"));
  put(String.prototype, "localeCompare", method1("localeCompare", "localeCompare"));
  put(String.prototype, "toLocaleUpperCase", method("toLocaleUpperCase", "upper"));
  put(String.prototype, "toLocaleLowerCase", method("toLocaleLowerCase", "lower"));
  put(Array.prototype, "toLocaleString", method("toLocaleString", "array"));
  put(Object.getPrototypeOf(Uint8Array.prototype), "toLocaleString", method("toLocaleString", "typed"));
  const zoned = (native) => ({ [native.name]() { const s = native.call(this); return s === "Invalid Date" ? s : `${s} (Coordinated Universal Time)`; } })[native.name];
  put(Date.prototype, "toString", zoned(Date.prototype.toString));
  put(Date.prototype, "toTimeString", zoned(Date.prototype.toTimeString));
})
