// Guest module: fetch(input, init), answered by the host (http/https only, public addresses,
// bounded). A body crosses as text when it is UTF-8 and as base64 otherwise, both ways, so bytes
// arrive unchanged; the answer is a Response (guest/http.js).
(function (lib) {
  "use strict";
  const http = lib.load("http");
  function headerRecord(h) {
    const out = {};
    if (h === undefined || h === null) return out;
    new http.Headers(h).forEach((v, k) => (out[k] = v));
    return out;
  }
  // The request body as the host call carries it: {body} (text, or bytes that are UTF-8) or {bodyBase64}.
  // Asynchronous, as fetch's start: an abort right after fetch() returns comes before the call is sent.
  async function bodyArgs(request) {
    if (request.method === "GET" || request.method === "HEAD" || request._peek() === null) return {};
    const b = request._peek();
    if (b.text !== undefined) return { body: b.text };
    try {
      return { body: new (lib.load("encoding").TextDecoder)("utf-8", { fatal: true, ignoreBOM: true }).decode(b.bytes) };
    } catch {
      return { bodyBase64: lib.load("bytes").toBase64(b.bytes) };
    }
  }
  const aborted = (signal) => (signal.reason === undefined ? new (lib.load("dom").DOMException)("The signal has been aborted", "AbortError") : signal.reason);
  async function fetch(input, init) {
    const request = new http.Request(input, init);
    const signal = request.signal;
    const args = Object.assign({ url: request.url, method: request.method, headers: headerRecord(request.headers) }, await bodyArgs(request));
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
