// Guest module: console, captured into the run's logs (bounded by maxLogBytes).
(function (lib) {
  "use strict";
  function show(v) {
    if (typeof v === "string") return v;
    if (v instanceof Error) return v.stack ? `${v.name}: ${v.message}\n${v.stack}` : String(v);
    if (typeof v === "bigint") return `${v}n`;
    if (v === undefined || typeof v === "symbol") return String(v);
    if (typeof v === "function") return `[Function ${v.name || "anonymous"}]`;
    try {
      const s = lib.stringify(v, (k, x) => (typeof x === "bigint" ? `${x}n` : x));
      return s === undefined ? String(v) : s;
    } catch {
      return String(v);
    }
  }
  const console = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    console[level] = (...args) => lib.host.log(args.map(show).join(" "));
  }
  return { console, show };
})
