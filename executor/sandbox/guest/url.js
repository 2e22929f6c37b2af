// Guest module: URL (parsed by Node's WHATWG URL parser in the sandbox process:
// ../process/web-calls.ts) and URLSearchParams (application/x-www-form-urlencoded, in JavaScript).
(function (lib) {
  "use strict";
  const { encode, decode } = lib.load("bytes");
  const web = (name, args) => decode(lib.host.web(name, encode(args)));

  // The urlencoded serializer: alphanumerics and *-._ stay, space is +, everything else is %XX of its UTF-8.
  const serialize = (s) => encodeURIComponent(s).replace(/[!'()~]|%20/g, (c) => (c === "%20" ? "+" : "%" + c.charCodeAt(0).toString(16).toUpperCase()));
  function unescape(s) {
    const t = s.replace(/\+/g, " ");
    try {
      return decodeURIComponent(t);
    } catch {
      // A malformed %-sequence stays as it is; the valid ones around it are decoded.
      return t.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
        try {
          return decodeURIComponent(run);
        } catch {
          return run;
        }
      });
    }
  }
  const usv = (v) => String(v).replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

  class URLSearchParams {
    #list = [];
    #onChange = null;
    constructor(init = "") {
      if (init instanceof URLSearchParams) this.#list = init.#list.map((p) => p.slice());
      else if (init !== null && typeof init === "object" && typeof init[Symbol.iterator] === "function") {
        for (const pair of init) {
          const p = Array.from(pair);
          if (p.length !== 2) throw new TypeError("URLSearchParams: each pair must have exactly two items");
          this.#list.push([usv(p[0]), usv(p[1])]);
        }
      } else if (init !== null && typeof init === "object") for (const k of Object.keys(init)) this.#list.push([usv(k), usv(init[k])]);
      else this._parse(String(init));
    }
    _parse(s) {
      this.#list = [];
      for (const part of (s.startsWith("?") ? s.slice(1) : s).split("&")) {
        if (part === "") continue;
        const i = part.indexOf("=");
        this.#list.push(i < 0 ? [unescape(part), ""] : [unescape(part.slice(0, i)), unescape(part.slice(i + 1))]);
      }
    }
    _bind(onChange) {
      this.#onChange = onChange;
    }
    #changed() {
      if (this.#onChange) this.#onChange(this.toString());
    }
    get size() {
      return this.#list.length;
    }
    append(name, value) {
      this.#list.push([usv(name), usv(value)]);
      this.#changed();
    }
    delete(name, value) {
      const n = usv(name);
      this.#list = this.#list.filter(([k, v]) => !(k === n && (value === undefined || v === usv(value))));
      this.#changed();
    }
    get(name) {
      const hit = this.#list.find(([k]) => k === usv(name));
      return hit ? hit[1] : null;
    }
    getAll(name) {
      return this.#list.filter(([k]) => k === usv(name)).map(([, v]) => v);
    }
    has(name, value) {
      return this.#list.some(([k, v]) => k === usv(name) && (value === undefined || v === usv(value)));
    }
    set(name, value) {
      const n = usv(name);
      const i = this.#list.findIndex(([k]) => k === n);
      if (i < 0) this.#list.push([n, usv(value)]);
      else {
        this.#list[i][1] = usv(value);
        this.#list = this.#list.filter(([k], j) => k !== n || j === i);
      }
      this.#changed();
    }
    sort() {
      this.#list = this.#list.map((p, i) => [p, i]).sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1])).map(([p]) => p);
      this.#changed();
    }
    forEach(cb, thisArg) {
      for (const [k, v] of this.#list.slice()) cb.call(thisArg, v, k, this);
    }
    *entries() {
      for (const [k, v] of this.#list.slice()) yield [k, v];
    }
    *keys() {
      for (const [k] of this.#list.slice()) yield k;
    }
    *values() {
      for (const [, v] of this.#list.slice()) yield v;
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    toString() {
      return this.#list.map(([k, v]) => `${serialize(k)}=${serialize(v)}`).join("&");
    }
    get [Symbol.toStringTag]() {
      return "URLSearchParams";
    }
  }

  const PARTS = ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"];
  class URL {
    #parts;
    #params;
    constructor(url, base) {
      if (arguments.length === 0) throw new TypeError("URL: 1 argument required");
      const href = (v) => (v instanceof URL ? v.href : String(v));
      this.#parts = web("urlParse", base === undefined ? [href(url)] : [href(url), href(base)]);
      this.#params = new URLSearchParams(this.#parts.search);
      this.#params._bind((query) => {
        this.#parts = web("urlSet", [this.#parts.href, "search", query]);
      });
    }
    _get(part) {
      return this.#parts[part];
    }
    _set(part, value) {
      this.#parts = web("urlSet", [this.#parts.href, part, String(value)]);
      this.#params._parse(this.#parts.search);
    }
    get searchParams() {
      return this.#params;
    }
    toString() {
      return this.#parts.href;
    }
    toJSON() {
      return this.#parts.href;
    }
    static canParse(url, base) {
      try {
        new URL(url, base);
        return true;
      } catch {
        return false;
      }
    }
    static parse(url, base) {
      try {
        return new URL(url, base);
      } catch {
        return null;
      }
    }
    get [Symbol.toStringTag]() {
      return "URL";
    }
  }
  for (const part of PARTS) {
    Object.defineProperty(URL.prototype, part, {
      configurable: true,
      enumerable: true,
      get() {
        return this._get(part);
      },
      set: part === "origin" ? undefined : function (value) {
        this._set(part, value);
      },
    });
  }
  return { URL, URLSearchParams };
})
