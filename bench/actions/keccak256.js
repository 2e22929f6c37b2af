// The CPU-heavy action of `npm run bench` (VESTA_BENCH=cpu): `params.rounds` rounds of keccak256 in
// plain JavaScript (Keccak-f[1600] on 32-bit halves of its 64-bit lanes), each hashing the last
// digest. The bench runs this very text in the sandbox (QuickJS) and in Node's own V8.
const RATE = 136; // bytes of keccak256's rate (1088 bits)
const RC = []; // round constants, [low, high] per round, from the LFSR of the Keccak reference
const ROT = []; // rotation of lane x + 5y
const PI = []; // where ρ and π move lane x + 5y: lane y + 5((2x + 3y) mod 5)
(function tables() {
  let r = 1;
  for (let round = 0; round < 24; round++) {
    let low = 0;
    let high = 0;
    for (let j = 0; j < 7; j++) {
      if (r & 1) {
        const bit = (1 << j) - 1;
        if (bit < 32) low |= 1 << bit;
        else high |= 1 << (bit - 32);
      }
      r = r & 0x80 ? ((r << 1) ^ 0x171) & 0xff : r << 1;
    }
    RC.push(low >>> 0, high >>> 0);
  }
  ROT[0] = 0;
  let x = 1;
  let y = 0;
  for (let t = 0; t < 24; t++) {
    ROT[x + 5 * y] = (((t + 1) * (t + 2)) / 2) % 64;
    [x, y] = [y, (2 * x + 3 * y) % 5];
  }
  for (let i = 0; i < 25; i++) PI[i] = ((i / 5) | 0) + 5 * ((2 * (i % 5) + 3 * ((i / 5) | 0)) % 5);
})();

function permute(s) {
  const c = new Uint32Array(10);
  const b = new Uint32Array(50);
  for (let round = 0; round < 24; round++) {
    for (let x = 0; x < 5; x++) {
      c[2 * x] = s[2 * x] ^ s[2 * x + 10] ^ s[2 * x + 20] ^ s[2 * x + 30] ^ s[2 * x + 40];
      c[2 * x + 1] = s[2 * x + 1] ^ s[2 * x + 11] ^ s[2 * x + 21] ^ s[2 * x + 31] ^ s[2 * x + 41];
    }
    for (let x = 0; x < 5; x++) {
      const p = 2 * ((x + 4) % 5);
      const n = 2 * ((x + 1) % 5);
      const dl = c[p] ^ ((c[n] << 1) | (c[n + 1] >>> 31));
      const dh = c[p + 1] ^ ((c[n + 1] << 1) | (c[n] >>> 31));
      for (let y = 0; y < 50; y += 10) {
        s[2 * x + y] ^= dl;
        s[2 * x + y + 1] ^= dh;
      }
    }
    for (let i = 0; i < 25; i++) {
      const lo = s[2 * i];
      const hi = s[2 * i + 1];
      const n = ROT[i];
      const to = 2 * PI[i];
      if (n === 0) {
        b[to] = lo;
        b[to + 1] = hi;
      } else if (n < 32) {
        b[to] = (lo << n) | (hi >>> (32 - n));
        b[to + 1] = (hi << n) | (lo >>> (32 - n));
      } else if (n === 32) {
        b[to] = hi;
        b[to + 1] = lo;
      } else {
        b[to] = (hi << (n - 32)) | (lo >>> (64 - n));
        b[to + 1] = (lo << (n - 32)) | (hi >>> (64 - n));
      }
    }
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) {
        const i = 2 * (x + y);
        const i1 = 2 * (((x + 1) % 5) + y);
        const i2 = 2 * (((x + 2) % 5) + y);
        s[i] = b[i] ^ (~b[i1] & b[i2]);
        s[i + 1] = b[i + 1] ^ (~b[i1 + 1] & b[i2 + 1]);
      }
    }
    s[0] ^= RC[2 * round];
    s[1] ^= RC[2 * round + 1];
  }
}

function keccak256(bytes) {
  const s = new Uint32Array(50);
  const padded = new Uint8Array(Math.floor(bytes.length / RATE) * RATE + RATE);
  padded.set(bytes);
  padded[bytes.length] ^= 0x01;
  padded[padded.length - 1] ^= 0x80;
  for (let block = 0; block < padded.length; block += RATE) {
    for (let i = 0; i < RATE / 4; i++) {
      const at = block + 4 * i;
      s[i] ^= padded[at] | (padded[at + 1] << 8) | (padded[at + 2] << 16) | (padded[at + 3] << 24);
    }
    permute(s);
  }
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = (s[i >> 2] >>> (8 * (i & 3))) & 0xff;
  return out;
}

async function main(params) {
  let digest = Uint8Array.from("vesta", (ch) => ch.charCodeAt(0));
  for (let i = 0; i < params.rounds; i++) digest = keccak256(digest);
  return "0x" + Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
