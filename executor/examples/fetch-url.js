// Fetches params.url and returns the status, the content type and the JSON (or text) body.
async function main({ url }) {
  const res = await fetch(new Request(url, { headers: { accept: "application/json" } }));
  const contentType = res.headers.get("content-type") ?? "";
  const bytes = (await res.clone().arrayBuffer()).byteLength;
  const body = contentType.includes("application/json") ? await res.json() : await res.text();
  return { ok: res.ok, status: res.status, contentType, body, isResponse: res instanceof Response, bytes };
}
