// Guest module: Headers, Request and Response as the Fetch standard has them, without streams:
// a body is text or bytes, read once with text(), json(), arrayBuffer() or bytes().
(function (lib) {
  "use strict";
  const { view } = lib.load("bytes");
  const encoding = () => lib.load("encoding");
  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  const trim = (v) => String(v).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  const checkName = (name) => {
    const n = String(name);
    if (!TOKEN.test(n)) throw new TypeError(`Headers: invalid header name ${JSON.stringify(n.slice(0, 100))}`);
    return n.toLowerCase();
  };
  const checkValue = (value) => {
    const v = trim(value);
    if (/[\0\r\n]/.test(v)) throw new TypeError("Headers: invalid header value");
    return v;
  };

  class Headers {
    #map = new Map(); // lower-case name → list of values
    constructor(init) {
      if (init === undefined || init === null) return;
      if (init instanceof Headers) init.forEach((v, k) => this.append(k, v));
      else if (typeof init[Symbol.iterator] === "function") {
        for (const pair of init) {
          const p = Array.from(pair);
          if (p.length !== 2) throw new TypeError("Headers: each header must be a [name, value] pair");
          this.append(p[0], p[1]);
        }
      } else if (typeof init === "object") for (const k of Object.keys(init)) this.append(k, init[k]);
      else throw new TypeError("Headers: init must be an object, an iterable of pairs or Headers");
    }
    append(name, value) {
      const k = checkName(name);
      const list = this.#map.get(k) || [];
      list.push(checkValue(value));
      this.#map.set(k, list);
    }
    set(name, value) {
      this.#map.set(checkName(name), [checkValue(value)]);
    }
    delete(name) {
      this.#map.delete(checkName(name));
    }
    get(name) {
      const list = this.#map.get(checkName(name));
      return list ? list.join(", ") : null;
    }
    getSetCookie() {
      return (this.#map.get("set-cookie") || []).slice();
    }
    has(name) {
      return this.#map.has(checkName(name));
    }
    *entries() {
      for (const k of [...this.#map.keys()].sort()) {
        if (k === "set-cookie") for (const v of this.#map.get(k)) yield [k, v];
        else yield [k, this.#map.get(k).join(", ")];
      }
    }
    *keys() {
      for (const [k] of this.entries()) yield k;
    }
    *values() {
      for (const [, v] of this.entries()) yield v;
    }
    forEach(cb, thisArg) {
      for (const [k, v] of this.entries()) cb.call(thisArg, v, k, this);
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    get [Symbol.toStringTag]() {
      return "Headers";
    }
  }

  // A body init as {text} or {bytes}, and the content type it implies.
  function bodyOf(init) {
    if (init === undefined || init === null) return { body: null };
    if (typeof init === "string") return { body: { text: init }, type: "text/plain;charset=UTF-8" };
    if (init instanceof ArrayBuffer || ArrayBuffer.isView(init)) return { body: { bytes: view(init, "body").slice() } };
    if (init instanceof lib.load("url").URLSearchParams) return { body: { text: init.toString() }, type: "application/x-www-form-urlencoded;charset=UTF-8" };
    if (typeof init === "object" && (typeof init.getReader === "function" || typeof init.stream === "function")) {
      throw new TypeError("streams, Blob and FormData bodies are not supported in the sandbox: pass a string or bytes");
    }
    return { body: { text: String(init) }, type: "text/plain;charset=UTF-8" };
  }

  // The Body mixin: one read of the text or bytes.
  class Body {
    #body;
    #used = false;
    _setBody(body) {
      this.#body = body;
    }
    get bodyUsed() {
      return this.#used;
    }
    _take() {
      if (this.#used) return Promise.reject(new TypeError("Body is unusable: Body has already been read"));
      this.#used = this.#body !== null;
      return Promise.resolve(this.#body);
    }
    _peek() {
      if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
      return this.#body;
    }
    async text() {
      const b = await this._take();
      return b === null ? "" : b.text !== undefined ? b.text : new (encoding().TextDecoder)().decode(b.bytes);
    }
    async arrayBuffer() {
      const bytes = await this.bytes();
      return bytes.buffer;
    }
    async bytes() {
      const b = await this._take();
      return b === null ? new Uint8Array(0) : b.bytes !== undefined ? b.bytes.slice() : encoding().utf8(b.text);
    }
    async json() {
      return lib.parse(await this.text());
    }
    async blob() {
      throw new TypeError("Blob is not available in the sandbox: use arrayBuffer() or text()");
    }
    async formData() {
      throw new TypeError("FormData is not available in the sandbox: use text()");
    }
  }

  const NULL_BODY = new Set([101, 103, 204, 205, 304]);
  const INTERNAL = Symbol("vesta.response");
  class Response extends Body {
    #status;
    #statusText;
    #headers;
    #type = "default";
    #url = "";
    #redirected = false;
    constructor(body = null, init = {}, internal) {
      super();
      init = lib.opts(init);
      const status = init.status === undefined ? 200 : Number(init.status);
      if (!Number.isInteger(status) || status < 200 || status > 599) {
        if (internal !== INTERNAL) throw new RangeError(`Response: the status provided (${init.status}) is outside the range [200, 599]`);
      }
      this.#status = status;
      this.#statusText = init.statusText === undefined ? "" : String(init.statusText);
      this.#headers = new Headers(init.headers);
      const { body: b, type } = bodyOf(body);
      if (b !== null && NULL_BODY.has(status) && internal !== INTERNAL) throw new TypeError("Response: a null body status cannot have a body");
      if (type && internal !== INTERNAL && !this.#headers.has("content-type")) this.#headers.set("content-type", type);
      this._setBody(b);
      if (internal === INTERNAL) {
        this.#url = init.url || "";
        this.#redirected = Boolean(init.redirected);
        this.#type = init.type || "basic";
      }
    }
    get status() {
      return this.#status;
    }
    get ok() {
      return this.#status >= 200 && this.#status < 300;
    }
    get statusText() {
      return this.#statusText;
    }
    get headers() {
      return this.#headers;
    }
    get type() {
      return this.#type;
    }
    get url() {
      return this.#url;
    }
    get redirected() {
      return this.#redirected;
    }
    clone() {
      const b = this._peek();
      return new Response(b === null ? null : b.text !== undefined ? b.text : b.bytes, { status: this.#status, statusText: this.#statusText, headers: this.#headers, url: this.#url, redirected: this.#redirected, type: this.#type }, INTERNAL);
    }
    static json(data, init = {}) {
      const text = lib.stringify(data);
      if (text === undefined) throw new TypeError("Response.json: the data is not JSON-serializable");
      const headers = new Headers(lib.opts(init).headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      return new Response(text, Object.assign({}, lib.opts(init), { headers }));
    }
    static error() {
      return new Response(null, { status: 0, type: "error" }, INTERNAL);
    }
    static redirect(url, status = 302) {
      if (![301, 302, 303, 307, 308].includes(status)) throw new RangeError("Response.redirect: invalid status");
      return new Response(null, { status, headers: { location: new (lib.load("url").URL)(url).href } });
    }
    get [Symbol.toStringTag]() {
      return "Response";
    }
  }

  const METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"];
  class Request extends Body {
    #url;
    #method;
    #headers;
    #signal;
    #redirect;
    constructor(input, init = {}) {
      super();
      init = lib.opts(init);
      const from = input instanceof Request ? input : null;
      this.#url = from ? from.url : new (lib.load("url").URL)(String(input && typeof input === "object" && "href" in input ? input.href : input)).href;
      const method = init.method !== undefined ? String(init.method) : from ? from.method : "GET";
      if (!TOKEN.test(method)) throw new TypeError(`Request: invalid method ${JSON.stringify(method.slice(0, 40))}`);
      this.#method = METHODS.includes(method.toUpperCase()) ? method.toUpperCase() : method;
      this.#headers = new Headers(init.headers !== undefined ? init.headers : from ? from.headers : undefined);
      this.#signal = init.signal !== undefined ? init.signal : from ? from.signal : new (lib.load("dom").AbortController)().signal;
      this.#redirect = init.redirect !== undefined ? String(init.redirect) : from ? from.redirect : "follow";
      const source = init.body !== undefined ? init.body : from ? from._peek() && (from._peek().text !== undefined ? from._peek().text : from._peek().bytes) : null;
      const { body, type } = bodyOf(source);
      if (body !== null && (this.#method === "GET" || this.#method === "HEAD")) throw new TypeError("Request with GET/HEAD method cannot have body");
      if (type && !this.#headers.has("content-type")) this.#headers.set("content-type", type);
      this._setBody(body);
    }
    get url() {
      return this.#url;
    }
    get method() {
      return this.#method;
    }
    get headers() {
      return this.#headers;
    }
    get signal() {
      return this.#signal;
    }
    get redirect() {
      return this.#redirect;
    }
    clone() {
      return new Request(this);
    }
    get [Symbol.toStringTag]() {
      return "Request";
    }
  }

  // A Response as fetch() answers it (status and url of the last hop, basic type; the body's bytes from base64 when they are not UTF-8).
  const fetched = (a, url) => new Response(typeof a.bodyBase64 === "string" ? lib.load("bytes").fromBase64(a.bodyBase64) : a.body, { status: a.status, statusText: a.statusText, headers: a.headers, url, type: "basic" }, INTERNAL);

  return { Headers, Request, Response, fetched, bodyOf };
})
