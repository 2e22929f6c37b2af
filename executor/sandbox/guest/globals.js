// Guest code, run in every fresh context before the action: each global of the sandbox (the table
// in ../process/guest-bindings.ts) is an accessor that loads its guest module on first read, then a
// plain property. The Lit namespace (readOnly) is as Chipotle defines it from the start: enumerable,
// non-configurable, without a setter (a getter that loads it once): deleting or redefining it
// fails, assigning to it throws in strict code and does nothing otherwise.
(function (load, globalsJson, readOnlyJson) {
  "use strict";
  const define = Object.defineProperty;
  const globals = JSON.parse(globalsJson);
  const readOnly = JSON.parse(readOnlyJson);
  for (const name of Object.keys(globals)) {
    if (readOnly.includes(name)) {
      let loaded = false;
      let value;
      const get = () => {
        if (!loaded) {
          value = load(globals[name])[name];
          loaded = true;
        }
        return value;
      };
      define(globalThis, name, { configurable: false, enumerable: true, get });
      continue;
    }
    const settle = (value) => define(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
    define(globalThis, name, {
      configurable: true,
      enumerable: false,
      get() {
        const value = load(globals[name])[name];
        settle(value);
        return value;
      },
      set: settle,
    });
  }
  define(globalThis, "global", { value: globalThis, writable: true, configurable: true, enumerable: false });
})
