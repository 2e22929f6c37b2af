// Guest module: TextEncoder, TextDecoder (UTF-8, as Deno's default; other labels are a RangeError)
// and atob/btoa, in plain JavaScript inside QuickJS (bounded by the run's memory and time).
(function (lib) {
  "use strict";
  const { view } = lib.load("bytes");
  const domError = (message, name) => new (lib.load("dom").DOMException)(message, name);

  // UTF-8 of a string; a lone surrogate becomes U+FFFD, as USVString conversion does.
  function utf8(s) {
    const out = [];
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = s.charCodeAt(i + 1);
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          i++;
        } else c = 0xfffd;
      }
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return Uint8Array.from(out);
  }

  class TextEncoder {
    get encoding() {
      return "utf-8";
    }
    encode(input = "") {
      return utf8(String(input));
    }
    encodeInto(source, destination) {
      if (!(destination instanceof Uint8Array)) throw new TypeError("TextEncoder.encodeInto: destination must be a Uint8Array");
      const s = String(source);
      let read = 0;
      let written = 0;
      for (let i = 0; i < s.length; ) {
        const c = s.codePointAt(i);
        const units = c > 0xffff ? 2 : 1;
        const bytes = utf8(s.slice(i, i + units));
        if (written + bytes.length > destination.length) break;
        destination.set(bytes, written);
        written += bytes.length;
        read += units;
        i += units;
      }
      return { read, written };
    }
  }

  const LABELS = ["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"];
  // The expected length of a sequence from its first byte (0: invalid lead byte).
  const lengthOf = (b) => (b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0);

  class TextDecoder {
    #fatal;
    #ignoreBOM;
    #pending = [];
    #continuing = false;
    constructor(label = "utf-8", options = {}) {
      if (!LABELS.includes(String(label).trim().toLowerCase())) throw new RangeError(`TextDecoder: the encoding "${label}" is not supported (UTF-8 only in the sandbox)`);
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() {
      return "utf-8";
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input, options = {}) {
      const stream = Boolean(options && options.stream);
      const fresh = input === undefined ? new Uint8Array(0) : view(input, "TextDecoder.decode: input");
      let bytes = fresh;
      if (this.#pending.length > 0) {
        bytes = new Uint8Array(this.#pending.length + fresh.length);
        bytes.set(this.#pending);
        bytes.set(fresh, this.#pending.length);
        this.#pending = [];
      }
      const codes = [];
      const parts = [];
      const flush = () => {
        if (codes.length > 0) parts.push(String.fromCodePoint.apply(null, codes.splice(0)));
      };
      const bad = () => {
        if (this.#fatal) throw new TypeError("TextDecoder: the encoded data is not valid UTF-8");
        codes.push(0xfffd);
      };
      let i = 0;
      while (i < bytes.length) {
        const b = bytes[i];
        const n = lengthOf(b);
        if (n === 1) {
          codes.push(b);
          i++;
        } else if (n === 0) {
          bad();
          i++;
        } else {
          let c = b & (0xff >> (n + 1));
          let j = 1;
          for (; j < n && i + j < bytes.length; j++) {
            const x = bytes[i + j];
            const lo = j === 1 && b === 0xe0 ? 0xa0 : j === 1 && b === 0xf0 ? 0x90 : 0x80;
            const hi = j === 1 && b === 0xed ? 0x9f : j === 1 && b === 0xf4 ? 0x8f : 0xbf;
            if (x < lo || x > hi) break;
            c = (c << 6) | (x & 63);
          }
          if (j === n) {
            codes.push(c);
            i += n;
          } else if (i + j >= bytes.length && stream) {
            this.#pending = Array.from(bytes.subarray(i));
            break;
          } else {
            bad();
            i += j;
          }
        }
        if (codes.length >= 4096) flush();
      }
      flush();
      let text = parts.join("");
      if (!this.#continuing && !this.#ignoreBOM && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.#continuing = stream;
      return text;
    }
  }

  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  function btoa(data) {
    if (arguments.length === 0) throw new TypeError("btoa: 1 argument required");
    const s = String(data);
    const out = [];
    for (let i = 0; i < s.length; i += 3) {
      const a = s.charCodeAt(i);
      const b = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      const c = i + 2 < s.length ? s.charCodeAt(i + 2) : 0;
      if (a > 255 || b > 255 || c > 255) throw domError("btoa: the string contains characters outside of the Latin1 range", "InvalidCharacterError");
      const n = (a << 16) | (b << 8) | c;
      out.push(B64[n >> 18], B64[(n >> 12) & 63], i + 1 < s.length ? B64[(n >> 6) & 63] : "=", i + 2 < s.length ? B64[n & 63] : "=");
    }
    return out.join("");
  }
  function atob(data) {
    if (arguments.length === 0) throw new TypeError("atob: 1 argument required");
    let s = String(data).replace(/[\t\n\f\r ]/g, "");
    if (s.length % 4 === 0) s = s.replace(/==?$/, "");
    if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s)) throw domError("atob: the string to be decoded is not correctly encoded", "InvalidCharacterError");
    const out = [];
    for (let i = 0; i < s.length; i += 4) {
      const n = (B64.indexOf(s[i]) << 18) | (B64.indexOf(s[i + 1]) << 12) | ((i + 2 < s.length ? B64.indexOf(s[i + 2]) : 0) << 6) | (i + 3 < s.length ? B64.indexOf(s[i + 3]) : 0);
      out.push(String.fromCharCode(n >> 16));
      if (i + 2 < s.length) out.push(String.fromCharCode((n >> 8) & 255));
      if (i + 3 < s.length) out.push(String.fromCharCode(n & 255));
    }
    return out.join("");
  }
  return { TextEncoder, TextDecoder, atob, btoa, utf8 };
})
