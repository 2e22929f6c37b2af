// Guest code, compiled in every fresh context before the action: settles with the action's
// response as JSON text (or undefined when it returned nothing). `target` is main or a promise;
// for an action evaluated as a module, the promise of its namespace, whose "vesta:main" is main.
// What main returns is its response as setResponse would take it (Chipotle's runtime calls
// setResponse({response}) with it): a string that parses as JSON is that JSON, any other string
// is itself, any other value is its JSON.
(() => {
  const { parse, stringify } = JSON;
  return async function track(target, paramsJson, module) {
    if (module) {
      target = (await target)["vesta:main"];
      if (target === undefined) return undefined;
    }
    const value = typeof target === "function" ? await target(parse(paramsJson)) : await target;
    if (value === undefined) return undefined;
    if (typeof value === "string") {
      try {
        parse(value);
        return value;
      } catch {
        return stringify(value);
      }
    }
    let json;
    try {
      json = stringify(value);
    } catch (e) {
      throw new TypeError(`the action's return value is not JSON-serializable: ${e && e.message}`);
    }
    if (json === undefined) throw new TypeError("the action's return value is not JSON-serializable");
    return json;
  };
})()
