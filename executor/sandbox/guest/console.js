// Guest module: console, as Deno 2.2.2's console prints (Chipotle runs actions in that Deno), colors
// off: each call one entry of the run's logs (lib.host.log; the run caps them at maxLogBytes).
// Arguments are formatted by Deno's rules: format specifiers in a first string argument, strings as
// they are, anything else inspected by guest/inspect.js, which is compiled only when a run first
// logs a value that is not a string, a number or one of the other plain primitives.
(function (lib) {
  "use strict";
  let inspector;
  const inspect = () => inspector || (inspector = lib.load("inspect"));
  /** A value as Deno prints an argument: the primitives that need no quoting here, the rest by the inspector. */
  function formatArg(value, context) {
    switch (typeof value) {
      case "number":
        return value === 0 && 1 / value < 0 ? "-0" : `${value}`;
      case "bigint":
        return `${value}n`;
      case "boolean":
        return `${value}`;
      case "undefined":
        return "undefined";
      default:
        return value === null ? "null" : inspect().formatValue(context(), value, 0);
    }
  }

  /** Deno's inspectArgs: format specifiers in a first string argument, strings as they are, other values inspected (one context for the call). */
  function inspectArgs(args, indentLevel, ctx) {
    const context = () => ctx || (ctx = inspect().newContext());
    const first = args[0];
    let a = 0;
    let string = "";
    if (typeof first === "string" && args.length > 1) {
      a++;
      let appended = 0;
      for (let i = first.indexOf("%"); i !== -1 && i < first.length - 1; i = first.indexOf("%", i + 1)) {
        const char = first[++i];
        if (a < args.length) {
          let formatted = null;
          if (char === "s") formatted = String(args[a++]);
          else if (char === "d" || char === "i") {
            const value = args[a++];
            formatted = typeof value === "symbol" ? "NaN" : `${parseInt(value)}`;
          } else if (char === "f") {
            const value = args[a++];
            formatted = typeof value === "symbol" ? "NaN" : `${parseFloat(value)}`;
          } else if (char === "O" || char === "o") formatted = inspect().formatValue(context(), args[a++], 0);
          else if (char === "c") {
            a++; // CSS: the logs have no colors
            formatted = "";
          }
          if (formatted !== null) {
            string += first.slice(appended, i - 1) + formatted;
            appended = i + 1;
          }
        }
        if (char === "%") {
          string += first.slice(appended, i - 1) + "%";
          appended = i + 1;
        }
      }
      string += first.slice(appended);
    }
    for (; a < args.length; a++) {
      if (a > 0) string += " ";
      string += typeof args[a] === "string" ? args[a] : formatArg(args[a], context);
    }
    if (indentLevel > 0) {
      const indent = "  ".repeat(indentLevel);
      string = indent + string.replaceAll("\n", `\n${indent}`);
    }
    return string;
  }
  /** What console.log(value) prints (the sandbox's own messages: an uncaught value in a timer). */
  const show = (value) => inspectArgs([value], 0);

  // The sandbox process's clock (microseconds), else Date.now().
  const now = () => {
    try {
      return lib.parse(lib.host.web("clock", "[]"));
    } catch {
      return Date.now();
    }
  };
  const elapsed = (start) => {
    const ms = now() - start;
    return ms < 1 ? ms.toFixed(3) : ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0);
  };
  const counts = new Map();
  const timers = new Map();
  let groupIndent = 0;
  const emit = (text) => lib.host.log(text);
  const print = (args) => emit(inspectArgs(args, groupIndent));

  const methods = {
    log: (...args) => print(args),
    debug: (...args) => print(args),
    info: (...args) => print(args),
    // Deno's dir takes inspect options and ignores the groups' indentation.
    dir: (obj = undefined, options = {}) => emit(typeof obj === "string" ? obj : inspectArgs([obj], 0, inspect().contextWith(options))),
    warn: (...args) => print(args),
    error: (...args) => print(args),
    assert: (condition = false, ...args) => {
      if (condition) return;
      if (args.length === 0) print(["Assertion failed"]);
      else if (typeof args[0] === "string") print([`Assertion failed: ${args[0]}`, ...args.slice(1)]);
      else print(["Assertion failed:", ...args]);
    },
    count: (label = "default") => {
      label = String(label);
      counts.set(label, (counts.get(label) || 0) + 1);
      print([`${label}: ${counts.get(label)}`]);
    },
    countReset: (label = "default") => {
      label = String(label);
      if (counts.has(label)) counts.set(label, 0);
      else print([`Count for '${label}' does not exist`]);
    },
    table: (data = undefined, properties = undefined) => {
      if (properties !== undefined && !Array.isArray(properties)) throw new Error(`The 'properties' argument must be of type Array: received type ${typeof properties}`);
      if (data === null || typeof data !== "object") return print([data]);
      print([inspect().tableText(data, properties)]);
    },
    time: (label = "default") => {
      label = String(label);
      if (timers.has(label)) print([`Timer '${label}' already exists`]);
      else timers.set(label, now());
    },
    timeLog: (label = "default", ...args) => {
      label = String(label);
      if (!timers.has(label)) return print([`Timer '${label}' does not exist`]);
      print([`${label}: ${elapsed(timers.get(label))}ms`, ...args]);
    },
    timeEnd: (label = "default") => {
      label = String(label);
      if (!timers.has(label)) return print([`Timer '${label}' does not exist`]);
      const start = timers.get(label);
      timers.delete(label);
      print([`${label}: ${elapsed(start)}ms`]);
    },
    group: (...label) => {
      if (label.length > 0) print(label);
      groupIndent += 2;
    },
    groupEnd: () => {
      if (groupIndent > 0) groupIndent -= 2;
    },
    // Deno writes a terminal's clear-screen sequence; the logs are no terminal: only the groups end.
    clear: () => {
      groupIndent = 0;
    },
    trace: (...args) => {
      const message = inspectArgs(args, 0);
      const frames = inspect().stackOf(new Error()).split("\n").slice(1);
      print([[message === "" ? "Trace" : `Trace: ${message}`, ...frames].join("\n")]);
    },
    profile: () => {},
    profileEnd: () => {},
    timeStamp: () => {},
  };
  methods.dirxml = methods.dir;
  methods.groupCollapsed = methods.group;
  // Deno's console object: its methods as own properties in Deno's order, tagged "console", over an empty object.
  const ORDER = ["log", "debug", "info", "dir", "dirxml", "warn", "error", "assert", "count", "countReset", "table", "time", "timeLog", "timeEnd", "group", "groupCollapsed", "groupEnd", "clear", "trace", "profile", "profileEnd", "timeStamp"];
  const console = Object.create({}, { [Symbol.toStringTag]: { value: "console", writable: false, enumerable: false, configurable: true } });
  for (const name of ORDER) console[name] = methods[name];
  console.indentLevel = 0;
  return { console, show };
})
