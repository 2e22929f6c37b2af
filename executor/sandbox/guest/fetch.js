// Guest module: fetch(url, init), answered by the host (http/https only, bounded). The body is
// text (UTF-8); the response offers ok, status, statusText, url, headers.get/has/forEach, text(), json().
(function (lib) {
  "use strict";
  const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
  function headerRecord(h) {
    const out = {};
    if (h === undefined || h === null) return out;
    const put = (k, v) => (out[String(k).toLowerCase()] = String(v));
    if (Array.isArray(h)) h.forEach(([k, v]) => put(k, v));
    else if (typeof h.forEach === "function") h.forEach((v, k) => put(k, v));
    else Object.keys(h).forEach((k) => put(k, h[k]));
    return out;
  }
  function makeResponse(a, url) {
    const headers = headerRecord(a.headers);
    const entries = () => Object.keys(headers).map((k) => [k, headers[k]]);
    const key = (n) => String(n).toLowerCase();
    return {
      ok: a.status >= 200 && a.status < 300,
      status: a.status,
      statusText: a.statusText,
      url,
      redirected: false,
      headers: {
        get: (n) => (has(headers, key(n)) ? headers[key(n)] : null),
        has: (n) => has(headers, key(n)),
        forEach: (cb) => entries().forEach(([k, v]) => cb(v, k)),
        entries: () => entries()[Symbol.iterator](),
        [Symbol.iterator]: () => entries()[Symbol.iterator](),
      },
      text: async () => a.body,
      json: async () => lib.parse(a.body),
    };
  }
  async function fetch(input, init) {
    init = lib.opts(init);
    const url = typeof input === "string" ? input : input && typeof input.url === "string" ? input.url : String(input);
    const body = init.body === undefined || init.body === null ? undefined : init.body;
    if (body !== undefined && typeof body !== "string") throw new TypeError("fetch: body must be a string");
    const method = String(init.method || "GET").toUpperCase();
    const answer = await lib.call("fetch", { url, method, headers: headerRecord(init.headers), body });
    return makeResponse(answer, url);
  }
  return { fetch };
})
