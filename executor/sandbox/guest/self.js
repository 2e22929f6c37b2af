// Guest module: self, the global object (as Deno's, and `global`).
(function () {
  "use strict";
  return { self: globalThis };
})
