// Guest code, run in every fresh context before the action: each global of the sandbox (the table
// in ../process/guest-bindings.ts) is an accessor that loads its guest module on first read, then a
// plain property. The Lit namespace (readOnly) has no setter and becomes non-writable and
// non-configurable, as on Chipotle: assigning to it throws in strict code and does nothing otherwise.
(function (load, globalsJson, readOnlyJson) {
  "use strict";
  const define = Object.defineProperty;
  const globals = JSON.parse(globalsJson);
  const readOnly = JSON.parse(readOnlyJson);
  for (const name of Object.keys(globals)) {
    const open = !readOnly.includes(name);
    const settle = (value) => define(globalThis, name, { value, writable: open, configurable: open, enumerable: false });
    define(globalThis, name, {
      configurable: true,
      enumerable: false,
      get() {
        const value = load(globals[name])[name];
        settle(value);
        return value;
      },
      set: open ? settle : undefined,
    });
  }
  define(globalThis, "global", { value: globalThis, writable: true, configurable: true, enumerable: false });
})
