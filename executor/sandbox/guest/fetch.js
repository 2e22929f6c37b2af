// Guest module: fetch(input, init), answered by the host (http/https only, public addresses,
// bounded). The request body is text (a string, URLSearchParams, or bytes that are UTF-8); the
// answer is a Response (guest/http.js) whose body is the response text (UTF-8).
(function (lib) {
  "use strict";
  const http = lib.load("http");
  function headerRecord(h) {
    const out = {};
    if (h === undefined || h === null) return out;
    new http.Headers(h).forEach((v, k) => (out[k] = v));
    return out;
  }
  async function bodyText(request) {
    if (request.method === "GET" || request.method === "HEAD" || request._peek() === null) return undefined;
    const b = request._peek();
    if (b.text !== undefined) return b.text;
    try {
      return new (lib.load("encoding").TextDecoder)("utf-8", { fatal: true }).decode(b.bytes);
    } catch {
      throw new TypeError("fetch: the body must be text (bytes that are not UTF-8 cannot be sent from the sandbox)");
    }
  }
  const aborted = (signal) => (signal.reason === undefined ? new (lib.load("dom").DOMException)("The signal has been aborted", "AbortError") : signal.reason);
  async function fetch(input, init) {
    const request = new http.Request(input, init);
    const signal = request.signal;
    const args = { url: request.url, method: request.method, headers: headerRecord(request.headers), body: await bodyText(request) };
    if (signal.aborted) throw aborted(signal); // before the call: the host never sees it
    const answer = lib.call("fetch", args);
    // An abort rejects at once; the host's request still ends by its own deadline and is ignored.
    const answered = await new Promise((resolve, reject) => {
      signal.addEventListener("abort", () => reject(aborted(signal)), { once: true });
      answer.then(resolve, reject);
    });
    return http.fetched(answered, request.url);
  }
  return { fetch };
})
