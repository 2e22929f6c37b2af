// The web platform an action written for Chipotle's Deno expects: text encoding, base64, URLs,
// structuredClone, Headers/Request/Response, AbortController, and `global`.
async function main({ name = "world" }) {
  const bytes = new TextEncoder().encode(`héllo ${name} 😀`);
  const url = new URL("/search?q=vesta", "https://example.com");
  url.searchParams.append("page", "2");
  const request = new Request(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name }) });
  const response = Response.json({ echoed: await request.clone().json() }, { status: 201 });
  const controller = new AbortController();
  controller.abort();
  const copy = structuredClone({ when: new Date(0), tags: new Set(["a"]), bytes });
  return {
    utf8Bytes: bytes.length,
    decoded: new TextDecoder().decode(bytes),
    base64: btoa("vesta"),
    fromBase64: atob("dmVzdGE="),
    url: url.href,
    query: Object.fromEntries(url.searchParams),
    request: { method: request.method, url: request.url, contentType: request.headers.get("content-type") },
    response: { status: response.status, ok: response.ok, type: response.headers.get("content-type"), body: await response.json() },
    aborted: { aborted: controller.signal.aborted, reason: controller.signal.reason.name },
    cloned: { when: copy.when.toISOString(), tags: [...copy.tags], sameBytes: copy.bytes !== bytes && copy.bytes.length === bytes.length },
    global: global === globalThis,
  };
}
