// Guest code, run once in the warm context (../process/context.ts), whose memory every run starts
// from: Math.random as xoshiro128** (53-bit doubles), seeded from the sandbox process's CSPRNG
// (`seed`: a 32-bit word per call) on its first call in each run; it uses nothing the action can
// replace. QuickJS's own Math.random is seeded when a context is made: from the snapshot, every
// run would draw the same numbers.
(function (seed) {
  "use strict";
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let seeded = false;
  const imul = Math.imul;
  const rotl = (x, k) => (x << k) | (x >>> (32 - k));
  function next() {
    const result = imul(rotl(imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  }
  const random = {
    random() {
      if (!seeded) {
        a = seed();
        b = seed();
        c = seed();
        d = seed() | 1; // never the all-zero state
        seeded = true;
      }
      return ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992;
    },
  }.random;
  Object.defineProperty(Math, "random", { value: random, writable: true, enumerable: false, configurable: true });
})
