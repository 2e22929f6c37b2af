// Hello world: logs a greeting and returns the params it was given.
async function main(params) {
  console.log(`hello, ${params.name ?? "world"}`);
  return { hello: params.name ?? "world", params };
}
