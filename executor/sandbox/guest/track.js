// Guest code, compiled in every fresh context before the action: settles with the action's
// response as JSON text (or undefined when it returned nothing). `target` is main or a promise;
// for an action evaluated as a module, the promise of its namespace, whose "vesta:main" is main.
(async function track(target, paramsJson, module) {
  if (module) {
    target = (await target)["vesta:main"];
    if (target === undefined) return undefined;
  }
  const value = typeof target === "function" ? await target(JSON.parse(paramsJson)) : await target;
  if (value === undefined) return undefined;
  let json;
  try {
    json = JSON.stringify(value);
  } catch (e) {
    throw new TypeError(`the action's return value is not JSON-serializable: ${e && e.message}`);
  }
  if (json === undefined) throw new TypeError("the action's return value is not JSON-serializable");
  return json;
})
