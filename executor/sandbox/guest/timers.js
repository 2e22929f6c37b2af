// Guest module: setTimeout/setInterval on real timers in the worker, bounded by the run's deadline.
// An error thrown by a callback ends the run (as an uncaught exception would in Node or Deno).
(function (lib) {
  "use strict";
  const { host } = lib;
  const uncaught = (where) => (e) => {
    const message = e instanceof Error ? `${e.name}: ${e.message} (uncaught in ${where})` : `Uncaught ${lib.load("console").show(e)} (in ${where})`;
    host.fail(message, e instanceof Error ? String(e.stack || "") : "");
  };
  const pending = new Set();
  let last = 0;
  function schedule(repeat, cb, ms, args) {
    if (typeof cb !== "function") throw new TypeError("timer callback must be a function");
    const id = ++last;
    const delay = Math.max(0, Number(ms) || 0);
    pending.add(id);
    const tick = () =>
      host.sleep(id, delay).then(() => {
        if (!pending.has(id)) return;
        if (!repeat) pending.delete(id);
        cb(...args);
        if (repeat && pending.has(id)) tick();
      }).catch(uncaught(repeat ? "setInterval" : "setTimeout"));
    tick();
    return id;
  }
  function clear(id) {
    if (pending.delete(id)) host.cancel(id);
  }
  return {
    setTimeout: (cb, ms, ...args) => schedule(false, cb, ms, args),
    setInterval: (cb, ms, ...args) => schedule(true, cb, ms, args),
    clearTimeout: clear,
    clearInterval: clear,
    queueMicrotask: (cb) => void Promise.resolve().then(cb).catch(uncaught("queueMicrotask")),
  };
})
