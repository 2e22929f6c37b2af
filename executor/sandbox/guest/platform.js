// Guest module: performance (now, timeOrigin, toJSON, mark/measure and their entries) and
// navigator, as Deno has them, with what the sandbox can honestly say: one thread, the sandbox's
// locale (en-US, guest/intl-core.js), Vesta as the user agent. The clock is the sandbox process's
// (Node's performance clock, microseconds); timeOrigin is when the run first read `performance`.
(function (lib) {
  "use strict";
  const clock = () => lib.parse(lib.host.web("clock", "[]"));
  const domError = (message, name) => new (lib.load("dom").DOMException)(message, name);
  const KEY = Symbol("vesta.platform");
  const illegal = (key) => {
    if (key !== KEY) throw new TypeError("Illegal constructor");
  };
  // Node's performance clock at the run's first read of `performance`, and that moment since the epoch.
  const zero = clock();
  const origin = lib.parse(lib.host.web("clockOrigin", "[]")) + zero;

  class PerformanceEntry {
    #name;
    #type;
    #start;
    #duration;
    constructor(key, name, type, start, duration) {
      illegal(key);
      this.#name = name;
      this.#type = type;
      this.#start = start;
      this.#duration = duration;
    }
    get name() {
      return this.#name;
    }
    get entryType() {
      return this.#type;
    }
    get startTime() {
      return this.#start;
    }
    get duration() {
      return this.#duration;
    }
    toJSON() {
      return { name: this.name, entryType: this.entryType, startTime: this.startTime, duration: this.duration };
    }
    get [Symbol.toStringTag]() {
      return "PerformanceEntry";
    }
  }
  const detailOf = (d) => (d === undefined ? null : lib.load("dom").structuredClone(d));
  class PerformanceMark extends PerformanceEntry {
    #detail;
    constructor(name, options = undefined) {
      if (arguments.length === 0) throw new TypeError("PerformanceMark: 1 argument required");
      const start = options && options.startTime !== undefined ? Number(options.startTime) : now();
      if (!(start >= 0)) throw new TypeError("Cannot use negative timestamp.");
      super(KEY, String(name), "mark", start, 0);
      this.#detail = detailOf(options ? options.detail : undefined);
    }
    get detail() {
      return this.#detail;
    }
    toJSON() {
      return Object.assign(super.toJSON(), { detail: this.detail });
    }
    get [Symbol.toStringTag]() {
      return "PerformanceMark";
    }
  }
  class PerformanceMeasure extends PerformanceEntry {
    #detail;
    constructor(key, name, start, duration, detail) {
      super(key, name, "measure", start, duration);
      this.#detail = detail;
    }
    get detail() {
      return this.#detail;
    }
    toJSON() {
      return Object.assign(super.toJSON(), { detail: this.detail });
    }
    get [Symbol.toStringTag]() {
      return "PerformanceMeasure";
    }
  }

  const now = () => clock() - zero;
  // The run's marks and measures, in the order made (bounded by the run's memory, as any array).
  let entries = [];
  const markTime = (name) => {
    if (typeof name === "number") return name;
    for (let i = entries.length - 1; i >= 0; i--) if (entries[i].entryType === "mark" && entries[i].name === name) return entries[i].startTime;
    throw domError(`Cannot find mark: "${name}".`, "SyntaxError");
  };
  class Performance {
    constructor(key) {
      illegal(key);
    }
    get timeOrigin() {
      return origin;
    }
    now() {
      return now();
    }
    toJSON() {
      return { timeOrigin: origin };
    }
    mark(name, options = undefined) {
      const mark = new PerformanceMark(name, options);
      entries.push(mark);
      return mark;
    }
    measure(name, startOrOptions = undefined, endMark = undefined) {
      let start = 0;
      let end;
      let detail = null;
      if (startOrOptions !== null && typeof startOrOptions === "object") {
        if (startOrOptions.start !== undefined) start = markTime(startOrOptions.start);
        if (startOrOptions.end !== undefined) end = markTime(startOrOptions.end);
        else if (startOrOptions.duration !== undefined) end = start + Number(startOrOptions.duration);
        detail = detailOf(startOrOptions.detail);
      } else if (startOrOptions !== undefined) start = markTime(String(startOrOptions));
      if (endMark !== undefined) end = markTime(String(endMark));
      if (end === undefined) end = now();
      const measure = new PerformanceMeasure(KEY, String(name), start, end - start, detail);
      entries.push(measure);
      return measure;
    }
    getEntries() {
      return entries.slice();
    }
    getEntriesByName(name, type = undefined) {
      return entries.filter((e) => e.name === String(name) && (type === undefined || e.entryType === String(type)));
    }
    getEntriesByType(type) {
      return entries.filter((e) => e.entryType === String(type));
    }
    clearMarks(name = undefined) {
      entries = entries.filter((e) => e.entryType !== "mark" || (name !== undefined && e.name !== String(name)));
    }
    clearMeasures(name = undefined) {
      entries = entries.filter((e) => e.entryType !== "measure" || (name !== undefined && e.name !== String(name)));
    }
    get [Symbol.toStringTag]() {
      return "Performance";
    }
  }

  const LANGUAGES = Object.freeze(["en-US"]);
  class Navigator {
    constructor(key) {
      illegal(key);
    }
    get hardwareConcurrency() {
      return 1;
    }
    get language() {
      return "en-US";
    }
    get languages() {
      return LANGUAGES;
    }
    get userAgent() {
      return "Vesta";
    }
    get [Symbol.toStringTag]() {
      return "Navigator";
    }
  }

  return {
    performance: new Performance(KEY),
    Performance,
    PerformanceEntry,
    PerformanceMark,
    PerformanceMeasure,
    navigator: new Navigator(KEY),
    Navigator,
  };
})
