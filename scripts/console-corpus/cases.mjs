// The programs of the console differential corpus (test/fixtures/console-corpus.json): each is run
// whole in Deno 2.2.2 (generate.mjs: one process each, stdout and stderr together) and in a sandbox
// run (test/executor.console.test.ts: one run each), and the outputs compared exactly, stack frames
// aside (each run of "    at ..." lines reads as one "<frames>"). A case with `vesta` is a known
// difference: the test expects that text instead, and `differs` says why (the README's list).
// Plain JavaScript, no imports: Deno runs it; the test reads only the JSON it produced.
const cases = [];
const add = (group, code, extra = {}) => cases.push({ group, code, ...extra });
const log = (group, ...exprs) => exprs.forEach((e) => add(group, `console.log(${e});`));

// ---- strings and other primitives
add("primitive", `console.log("plain top-level string");`);
add("primitive", `console.log("two", "strings", "joined");`);
add("primitive", `console.log("");`);
add("primitive", `console.log();`);
add("primitive", `console.log("multi\\nline\\ttab");`);
log("primitive", `1`, `-0`, `0`, `NaN`, `Infinity`, `-Infinity`, `1e21`, `1.5e-7`, `-1.25`, `2 ** 53`, `0.1 + 0.2`);
log("primitive", `1n`, `-123456789012345678901234567890n`, `0n`, `[1n, -0, 0]`);
log("primitive", `true, false`, `null`, `undefined`, `[undefined, null, true]`);
log("primitive", `Symbol()`, `Symbol("")`, `Symbol("desc")`, `Symbol("with space")`, `Symbol("a.b_c9")`, `Symbol.iterator`, `Symbol.for("reg")`, `Symbol('q"uote')`, `[Symbol("x y")]`, `{ [Symbol("k")]: Symbol() }`);
log("string", `["double"]`, `["it's"]`, `["say \\"hi\\""]`, `["both ' and \\""]`, `["all ' \\" \`"]`, `["back\\\\slash"]`, `["\\n\\t\\r\\b\\f\\v"]`, `["\\x00\\x01\\x1b\\x7f\\x80\\x9f\\xa0"]`);
log("string", `["\\u2028\\u2029 emoji 😀 é"]`, `{ s: "a'b\\"c\`d\\\\e" }`, `["x".repeat(16)]`, `["x".repeat(17)]`);
log("string", `["a".repeat(100)]`, `{ key: "b".repeat(75) }`, `{ key: "line one\\nline two\\nline three is longer than the rest of them by far, far longer" }`);
log("string", `["first line\\n" + "z".repeat(90)]`, `["ends with newline\\n".repeat(5)]`, `{ a: { b: { c: "y".repeat(70) } } }`);
log("string", `["q".repeat(10001)]`, `["r".repeat(12345).length]`, `{ long: "é".repeat(10002) }`, `["s".repeat(20000)].map((s) => s.length)`);
add("string", `console.log("t".repeat(5000));`);

// ---- format specifiers
add("format", `console.log("%s|%d|%i|%f|%o|%O|%j|%c|%%|%x", "s", "42.5", 3.9, "1.5e3", { a: 1 }, [1], "j", "color: red", "extra");`);
add("format", `console.log("%%", "a"); console.log("%%"); console.log("100%"); console.log("a%", 1); console.log("%s"); console.log("%s %s", "one");`);
add("format", `console.log("%d", 10n, Symbol("q")); console.log("%d %i %f", Symbol(), Symbol(), Symbol());`);
add("format", `console.log("%s", Symbol("s"), null, undefined, { toString() { return "TS"; } }); console.log("%s", { a: 1 }); console.log("%s", [1, [2]]);`);
add("format", `console.log("%o", "str"); console.log(1, "%s", 2); console.log("%d", {}, "%d", "abc"); console.log("%i", -0); console.log("%f", -0); console.log("%d", "0x10");`);
add("format", `console.log("%s", 1n, 2n); console.log("%s", -0); console.log("%s", new Error("e")); console.log("%s", () => 1); console.log("%s", "a\\nb");`);
add("format", `console.log("%i", 3.99, "%f", "2.5abc"); console.log("%f", "abc"); console.log("%d", null); console.log("%d", undefined); console.log("%d", true);`);
add("format", `console.log("%O and %o", { a: { b: { c: { d: { e: 1 } } } } }, [new Map([[1, 2]])]);`);
add("format", `console.log("%c styled %c", "color: red", "font-weight: bold", "after");`);
add("format", `console.log("%s%s%s", "a", "b"); console.log("%", 1); console.log("%%%s%%", "x"); console.log("%s", "%s", "y");`);
add("format", `console.log({ a: 1 }, "%s", "x"); console.log(1, 2, 3);`);
add("format", `console.log("%s", Object.create(null, { toString: { value: () => "nullproto" } }));`);

// ---- arrays
log("array", `[]`, `[1]`, `[1, 2, 3]`, `[[]]`, `[[1, [2, [3, [4, [5, [6]]]]]]]`, `[{}, [], ""]`, `new Array(5)`, `[, 1]`, `[1, , 2]`, `[1, , , , 5, , ]`, `Object.assign(new Array(3), { 1: "x" })`);
log("array", `[1, 2, 3, 4, 5, 6]`, `[1, 2, 3, 4, 5, 6, 7]`, `Array.from({ length: 26 }, (_, i) => i)`, `Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i))`, `Array.from({ length: 30 }, (_, i) => i * 1111)`);
log("array", `Array.from({ length: 100 }, (_, i) => i)`, `Array.from({ length: 101 }, (_, i) => i)`, `Array.from({ length: 250 }, (_, i) => i % 7)`, `Array.from({ length: 1000 }, (_, i) => "item" + i)`);
log("array", `Array.from({ length: 12 }, (_, i) => -i)`, `[1, -2, 333, -4444, 55555, 6, 7, 8]`, `[1n, 22n, 333n, 4n, 5n, 6n, 7n]`, `[1, "a", 2, "b", 3, "c", 4]`, `[true, false, true, false, true, false, true]`);
log("array", `Array.from({ length: 8 }, (_, i) => ({ i }))`, `Array.from({ length: 10 }, (_, i) => [i, i])`, `Array.from({ length: 20 }, (_, i) => "x".repeat(i))`, `Array.from({ length: 7 }, () => "a".repeat(30))`);
log("array", `Object.assign([1, 2], { extra: true })`, `Object.assign([], { extra: true })`, `Object.assign([1], { [Symbol("s")]: 2, "a-b": 3 })`, `Object.assign(Array.from({ length: 8 }, (_, i) => i), { k: "v" })`);
log("array", `(() => { const a = [1, 2, 3]; a.length = 6; return a; })()`, `(() => { const a = []; a[100] = 1; return a; })()`, `(() => { const a = []; a[2] = "x"; a[200] = "y"; return a; })()`, `Array(250).fill(0).map((_, i) => i % 3 ? i : undefined).filter((_, i) => i % 50)`);
log("array", `(() => { const a = Array.from({ length: 150 }, (_, i) => i); delete a[3]; return a; })()`, `[["a", 1], ["b", 2]]`, `[[1, 2, [3, 4, [5, [6, [7]]]]]]`, `[-0, 0, +0]`, `[NaN, Infinity]`);
log("array", `Array.from({ length: 7 }, (_, i) => "日本語".repeat(i))`, `["😀", "😀😀", "a", "b", "c", "d", "e"]`, `Array.from({ length: 40 }, (_, i) => i % 2 ? "x" : 1234567)`);
log("array", `(() => { class MyArray extends Array {} return new MyArray(1, 2, 3); })()`, `Object.setPrototypeOf([1, 2], null)`, `Object.assign([1, 2, 3], { [Symbol.toStringTag]: "Tagged" })`);

// ---- objects, keys, line breaking
log("object", `{}`, `{ a: 1 }`, `{ a: 1, b: "two", c: [3], d: { e: null } }`, `{ "a-b": 1, "1": 2, $x: 3, _ok: 4, "": 5, "with space": 6, "quo'te": 7, é: 8, a1: 9, "1a": 10 }`);
log("object", `{ 2: "b", 1: "a", z: 1, [Symbol("s")]: 2, 10: "c" }`, `JSON.parse('{"__proto__": 1}')`, `{ ["__proto__"]: 2 }`, `{ "\\n": 1, "\\x1b": 2, "tab\\t": 3 }`);
log("object", `{ a: { b: { c: {} } } }`, `{ a: { b: { c: { d: 1 } } } }`, `{ a: { b: { c: { d: { e: 1 } } } } }`, `{ a: { b: { c: { d: { e: { f: 1 } } } } } }`, `{ a: [[[[[1]]]]] }`, `[[[[[[]]]]]]`, `[[[[[[1]]]]]]`);
log("object", `{ first: [1, 2, 3], second: { inner: [1, 2, 3] } }`, `{ a: 1, b: { c: 2, d: { e: 3, f: { g: 4 } } }, h: 5 }`, `{ one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11 }`);
log("object", `{ aaaaaaaaaaaaaaaa: "bbbbbbbbbbbbbbbb", cccccccccccccccc: "dddddddddddddddd", eeeeeeee: "ffffffff" }`, `{ aaaaaaaaaaaaaaaa: "bbbbbbbbbbbbbbbb", cccccccccccccccc: "dddddddddddddddd", eeeeeeeeeee: "fffffffffff" }`);
log("object", `{ list: Array.from({ length: 30 }, (_, i) => i), nested: { list: Array.from({ length: 12 }, (_, i) => "s" + i) } }`, `{ a: { b: [1, 2, { c: [3, 4, { d: 5 }] }] } }`);
log("object", `Object.create(null)`, `Object.assign(Object.create(null), { a: 1 })`, `Object.create(Object.create(null))`, `Object.assign(Object.create(Object.create(null)), { x: 1 })`, `{ a: Object.create(null) }`);
log("object", `{ [Symbol.toStringTag]: "Custom" }`, `{ [Symbol.toStringTag]: "Custom", a: 1 }`, `{ constructor: "not a function" }`, `{ constructor: function Fake() {} }`, `{ toString() { return "x"; } }`);
log("object", `{ get a() { return 1; } }`, `{ set b(v) {} }`, `{ get c() { return 1; }, set c(v) {} }`, `{ get boom() { throw new Error("never called"); } }`, `Object.defineProperty({}, "hidden", { value: 1 })`, `Object.defineProperty({ v: 1 }, "g", { get() { return 2; }, enumerable: true })`);
log("object", `(function () { return arguments; })(1, "two")`, `(function () { "use strict"; return arguments; })()`, `{ f() {}, g: () => {}, h: function named() {} }`);
log("object", `{ a: undefined, b: null, c: NaN, d: -0, e: 1n, f: Symbol("s") }`, `{ date: new Date(0), re: /x/g, err: null }`, `Object.freeze({ frozen: true })`);
log("object", `{ key: { withAVeryLongNameThatGoesOn: 1, anotherRatherLongPropertyName: 2, third: 3 } }`, `[{ a: 1, b: 2 }, { a: 3, b: 4 }]`, `{ m: new Map([["k", { deep: { deeper: { deepest: 1 } } }]]) }`);

// ---- class instances, functions
log("class", `new (class Foo { constructor() { this.a = 1; } })()`, `new (class Foo {})()`, `new (class {})()`, `new (class Bar { get x() { return 1; } })()`, `new (class Baz { constructor() { this.self = "x"; } static s = 1; })()`);
log("class", `new (class Tagged { get [Symbol.toStringTag]() { return "Tag"; } })()`, `new (class Same { get [Symbol.toStringTag]() { return "Same"; } })()`, `(() => { class A {} class B extends A { constructor() { super(); this.b = 1; } } return new B(); })()`);
log("class", `(() => { function Old() { this.v = 1; } return new Old(); })()`, `(() => { function Old() {} Old.prototype.m = function () {}; return [new Old()]; })()`);
log("function", `function named() {}`, `function () {}`, `() => {}`, `async function af() {}`, `async () => {}`, `function* gen() {}`, `async function* agen() {}`, `Math.max`, `class K {}`, `class {}`, `class Child extends Array {}`, `class extends Object {}`);
log("function", `Object.assign(function withProps() {}, { a: 1 })`, `Object.assign(class WithStatic {}, { s: 1 })`, `(function f() {}).bind(null)`, `{ method() {} }.method`, `Object.getOwnPropertyDescriptor({ get g() { return 1; } }, "g").get`);
log("function", `[function a() {}, () => 1, class C {}]`, `{ fn: function () {} }`, `Object.setPrototypeOf(function nullFn() {}, null)`, `(() => { const f = function () {}; Object.defineProperty(f, "name", { value: "" }); return f; })()`);
log("function", `(() => { class A { static name = "Renamed"; } return A; })()`, `(() => { const f = () => {}; f[Symbol.toStringTag] = "T"; return f; })()`, `class /* comment { */ Commented {}`);

// ---- Map, Set, weak collections
log("collection", `new Map()`, `new Map([["a", 1], [{ k: 1 }, [2]]])`, `new Set()`, `new Set([1, "two", [3]])`, `new Map([[new Map([[1, 2]]), new Set([3])]])`, `{ m: new Map([[1, { a: 1 }]]) }`);
log("collection", `new Set(Array.from({ length: 120 }, (_, i) => i))`, `new Map(Array.from({ length: 105 }, (_, i) => [i, i]))`, `new Set(Array.from({ length: 10 }, (_, i) => i))`, `Object.assign(new Map([[1, 2]]), { extra: 1 })`);
log("collection", `new WeakMap()`, `new WeakSet()`, `(() => { class MyMap extends Map {} return new MyMap([[1, 2]]); })()`, `new Set([new Set([new Set([new Set([new Set([1])])])])])`);
log("collection", `new Map([["a".repeat(30), "b".repeat(30)], ["c".repeat(30), "d".repeat(30)]])`, `new Set(["aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccc", "dddddddddddddddddddd"])`);
log("collection", `[1, 2][Symbol.iterator]()`, `(function* g() { yield 1; })()`, `new Map([[1, 2]]).keys().next()`);

// ---- Date, RegExp, boxed primitives
log("date", `new Date(0)`, `new Date(Date.UTC(2024, 1, 29, 12, 34, 56, 789))`, `new Date(NaN)`, `[new Date(-1)]`, `Object.assign(new Date(0), { note: "x" })`, `{ d: new Date(8.64e15) }`, `(() => { class D extends Date {} return new D(0); })()`);
log("regexp", `/abc/`, `/a\\/b[c]/gimsuy`, `new RegExp("a/b")`, `[/x/g]`, `Object.assign(/re/, { extra: 1 })`, `(() => { class R extends RegExp {} return new R("r", "g"); })()`, `RegExp.prototype`);
log("boxed", `new Number(1)`, `new Number(-0)`, `new String("ab")`, `new Boolean(false)`, `Object(1n)`, `Object(Symbol("s"))`, `Object.assign(new String("ab"), { x: 1 })`, `[new Number(2), new String("s")]`, `Object.assign(new Number(3), { y: 2 })`);

// ---- errors (frames differ by engine: each run of frames is compared as one "<frames>")
log("error", `new Error("boom")`, `new TypeError("bad type")`, `new RangeError("")`, `new Error()`, `new SyntaxError("syn")`, `new EvalError("ev")`, `new URIError("u")`);
log("error", `(() => { class MyErr extends Error { constructor(m) { super(m); this.name = "MyErr"; } } return new MyErr("custom"); })()`, `(() => { class CodeErr extends Error { constructor() { super("with code"); this.code = 42; } } return new CodeErr(); })()`);
log("error", `Object.assign(new Error("extra"), { extra: 1, more: "two" })`, `{ e: new Error("nested") }`, `[new TypeError("in array")]`, `[new Error("a"), new Error("b")]`, `{ a: { b: { c: { d: { e: new Error("deep") } } } } }`);
log("error", `new Error("with cause", { cause: new Error("the cause") })`, `new Error("x", { cause: "str cause" })`, `new Error("x", { cause: { a: 1, s: "q" } })`, `new Error("x", { cause: 0 })`, `new Error("x", { cause: null })`, `new Error("x", { cause: new Error("c1", { cause: new Error("c2") }) })`);
log("error", `(() => { const e = new Error("circular cause"); e.cause = e; return e; })()`, `(() => { const a = new Error("a"); const b = new Error("b", { cause: a }); a.cause = b; return a; })()`, `{ err: new Error("x", { cause: new Error("y") }) }`);
log("error", `(() => { const e = new Error("x"); e.stack = "custom stack"; return e; })()`, `(() => { const e = new Error("x"); e.stack = undefined; return e; })()`, `(() => { const e = new Error("x"); e.stack = ""; return e; })()`, `(() => { const e = new Error("x"); e.name = "Renamed"; return e; })()`);
log("error", `(() => { const e = new Error("orig"); e.message = "changed"; return e; })()`, `new Error("multi\\nline\\nmessage")`, `Object.create(Error.prototype)`, `(() => { const e = new Error("x"); e.name = ""; return e; })()`);
log("error", `new AggregateError([new Error("one"), "two", { three: 3 }], "many")`, `new AggregateError([], "none")`, `{ agg: new AggregateError([new TypeError("t")], "inner") }`);
log("error", `(() => { const e = new Error("self"); e.self = e; return e; })()`, `Object.assign(new Error("c", { cause: new Error("d") }), { cause: "overridden" })`);
log("error", `new DOMException("dom message")`, `new DOMException("m", "NotFoundError")`, `{ d: new DOMException("nested", "AbortError") }`);
add("error", `try { null.x; } catch (e) { console.log(e.name, e instanceof TypeError); }`);
add("error", `console.error(new Error("to stderr")); console.warn("warned", { w: 1 });`);


// ---- typed arrays and buffers
log("binary", `new Uint8Array([1, 2, 3])`, `new Uint8Array(0)`, `new Int8Array([-1, 127, -128])`, `new Float64Array([1.5, -0, NaN])`, `new BigInt64Array([1n, -2n])`, `new BigUint64Array(2)`, `new Uint16Array(20)`, `new Uint8ClampedArray([300, -5])`);
log("binary", `new Uint8Array(150)`, `new Uint8Array(Array.from({ length: 30 }, (_, i) => i * 8))`, `Object.assign(new Uint8Array(2), { k: 1 })`, `new Uint8Array([1, 2, 3, 4]).subarray(1, 3)`, `new Int32Array([1, -1000000, 33, 4, 5, 6, 7])`, `new Float32Array([0.1, 0.2])`);
log("binary", `new ArrayBuffer(0)`, `new ArrayBuffer(4)`, `new Uint8Array([1, 255, 16]).buffer`, `new ArrayBuffer(120)`, `new DataView(new ArrayBuffer(4))`, `new DataView(new Uint8Array([9, 8, 7]).buffer, 1, 1)`, `{ buf: new ArrayBuffer(2) }`);
log("binary", `new SharedArrayBuffer(3)`, `(() => { const b = new ArrayBuffer(8); b.transfer(); return b; })()`, `[new Uint8Array(3), new Uint8Array(3)]`);

// ---- circular references
log("circular", `(() => { const o = { name: "o" }; o.self = o; return o; })()`, `(() => { const a = [1]; a.push(a); return a; })()`, `(() => { const o = {}; o.a = { b: { back: o } }; return o; })()`);
log("circular", `(() => { const a = { n: "a" }; const b = { n: "b", a }; a.b = b; return [a, b]; })()`, `(() => { const o = {}; const p = {}; o.p = p; p.p = p; o.o = o; return o; })()`, `(() => { const m = new Map(); m.set("self", m); return m; })()`);
log("circular", `(() => { const s = new Set(); s.add(s); return s; })()`, `(() => { const shared = { s: 1 }; return { a: shared, b: shared, c: [shared] }; })()`, `(() => { const o = {}; o.o = o; return [o, o]; })()`);
add("circular", `const o = {}; o.o = o; console.log(o, o); console.log({ x: o });`);

// ---- Proxy (QuickJS does not let JavaScript look through a Proxy; its traps answer)
log("proxy", `new Proxy({ a: 1 }, {})`, `new Proxy([1, 2, 3], {})`, `new Proxy(function pf() {}, {})`, `new Proxy({}, { ownKeys: () => ["x"], getOwnPropertyDescriptor: () => ({ value: "lie", enumerable: true, configurable: true }) })`);
add("proxy", `const p = new Proxy({}, { ownKeys() { throw new Error("ownKeys!"); } }); try { console.log(p); } catch (e) { console.log("threw:", e.message); }`);
add("proxy", `const p = new Proxy({}, { getPrototypeOf() { throw new Error("gpo"); } }); try { console.log(p); } catch (e) { console.log("threw:", e.message); }`);
add("proxy", `const p = new Proxy({}, { has() { throw new Error("has"); } }); try { console.log(p); } catch (e) { console.log("threw:", e.message); }`);
add("proxy", `const p = new Proxy({ a: 1 }, { get(t, k) { throw new Error("get " + String(k)); } }); try { console.log(p); } catch (e) { console.log("threw:", e.message); }`);

// ---- hostile values
add("hostile", `const o = { get boom() { throw new Error("getter"); }, ok: 1 }; console.log(o); console.log([o]);`);
add("hostile", `const o = { toString() { throw new Error("toString"); } }; console.log(o); try { console.log("%s", o); } catch (e) { console.log("threw:", e.message); }`);
add("hostile", `const o = { get [Symbol.toStringTag]() { throw new Error("tag"); } }; try { console.log(o); } catch (e) { console.log("threw:", e.message); }`);
add("hostile", `const o = { [Symbol.toStringTag]: 42, constructor: 1, valueOf() { throw 1; } }; console.log(o);`);
add("hostile", `let deep = {}; for (let i = 0; i < 10000; i++) deep = { next: deep }; console.log(deep); let arr = []; for (let i = 0; i < 10000; i++) arr = [arr]; console.log(arr);`);
add("hostile", `console.log(Array.from({ length: 100000 }, (_, i) => i)); console.log(new Set(Array.from({ length: 100000 }, (_, i) => i)).size);`);
add("hostile", `console.log({ s: "x".repeat(1000000) });`);
add("hostile", `const o = {}; for (let i = 0; i < 200; i++) o["k" + i] = i; console.log(o);`);
add("hostile", `const a = [1, 2]; Object.defineProperty(a, 0, { get() { throw new Error("index getter"); } }); console.log(a);`);
add("hostile", `class Evil { static get name() { return "NotEvil"; } } console.log(new Evil(), Evil);`);
add("hostile", `const o = { [Symbol.for("nodejs.util.inspect.custom")]() { return "custom node"; } }; console.log(o, [o]);`);
add("hostile", `const o = { [Symbol.for("nodejs.util.inspect.custom")](depth, options, inspect) { return { replaced: depth, fn: typeof inspect }; } }; console.log(o);`);
add("hostile", `const o = { [Symbol.for("Deno.customInspect")](inspect, options) { return "deno custom " + inspect({ a: [1] }); } }; console.log({ o });`);
add("hostile", `const o = { [Symbol.for("nodejs.util.inspect.custom")]() { return "multi\\nline"; } }; console.log({ a: { o } });`);

add("hostile", `const calls = []; const hook = (name) => () => { calls.push(name); return 1; }; const o = { get a() { return hook("get a")(); }, toString: hook("toString"), valueOf: hook("valueOf"), toJSON: hook("toJSON"), [Symbol.toPrimitive]: hook("toPrimitive"), then: hook("then"), inspect: hook("inspect") }; console.log(o, [o], new Map([[o, o]]), new Set([o]), "%o", o); console.log(calls);`);
add("hostile", `let reads = 0; class Foo { get x() { reads++; return 1; } } Object.defineProperty(Foo.prototype, "y", { get() { reads++; return 2; }, enumerable: true }); console.log(new Foo(), [new Foo()], reads);`);

add("hostile", `const o = { [Symbol.for("nodejs.util.inspect.custom")]() { throw new Error("custom threw"); } }; try { console.log(o); } catch (e) { console.log("threw:", e.message); }`);
add("hostile", `const o = { [Symbol.for("Deno.customInspect")]() { return 42; } }; const p = { [Symbol.for("nodejs.util.inspect.custom")]() { return [1, { a: 2 }]; } }; console.log(o, p, { o, p });`);
add("hostile", `const p = new Proxy([1, 2, 3], { getOwnPropertyDescriptor(t, k) { return k === "1" ? undefined : Reflect.getOwnPropertyDescriptor(t, k); } }); console.log(p);`);

// ---- more layouts
log("layout", `["a\\nb", "c"]`, `{ a: "x".repeat(60), b: "y".repeat(60) }`, `{ a: { b: { c: "z".repeat(50) } } }`, `Array.from({ length: 8 }, (_, i) => "word" + "s".repeat(i))`, `Array.from({ length: 9 }, (_, i) => ({ k: i }))`);
log("layout", `{ level1: { level2: { level3: { a: 1, b: 2 } }, other: [1, 2, 3] }, tail: "t" }`, `[[1, 2, [3, 4]], [5, [6, [7, [8]]]]]`, `{ x: [{ y: [{ z: [1] }] }] }`, `new Map([[{ a: 1 }, { b: [1, 2, { c: 3 }] }]])`);
log("layout", `Array.from({ length: 16 }, (_, i) => 2 ** (i * 3))`, `Array.from({ length: 7 }, (_, i) => i % 2 ? -i : 10 ** i)`, `Array.from({ length: 27 }, (_, i) => i < 26 ? String.fromCharCode(65 + i).repeat(i % 4 + 1) : null)`);
log("layout", `Object.fromEntries(Array.from({ length: 12 }, (_, i) => ["key" + i, i]))`, `Object.fromEntries(Array.from({ length: 4 }, (_, i) => ["k" + i, "v".repeat(15)]))`, `[{ a: 1, b: { c: [1, 2] } }, { a: 2, b: { c: [] } }]`);
add("layout", `console.log("%o", new Error("in format")); console.log("x", { a: [1, 2, 3] }, "y", [{}]); console.log(Object.assign(() => {}, { a: 1 }));`);
add("layout", `console.log({ [Symbol("a")]: 1, [Symbol()]: 2, [Symbol.for("x y")]: 3, b: 4 }); console.log(new (class S { constructor() { this[Symbol("own")] = 1; } })());`);

// ---- the sandbox's classes (Deno's own for the same names)
log("platform", `new Headers()`, `new Headers({ "Content-Type": "text/plain", "x-b": "2", "X-A": "1" })`, `new Headers([["Set-Cookie", "a=1"], ["set-cookie", "b=2"], ["X-A", "1"], ["x-a", "2"]])`, `{ h: new Headers({ a: "b" }) }`);
log("platform", `new URL("https://user:pw@example.com:8080/p/a/t/h?query=string#hash")`, `[new URL("http://a.b/")]`, `{ u: { v: { w: { x: { y: new URL("http://deep/") } } } } }`, `String(new URL("http://a.b/c"))`);
log("platform", `new URLSearchParams("a=1&b=2&a=3")`, `new URLSearchParams()`, `{ q: new URLSearchParams({ k: "v" }) }`);
log("platform", `new Request("https://a.b/x", { method: "POST", body: "hi", headers: { a: "b" } })`, `new Request("https://a.b/")`);
log("platform", `new AbortController()`, `AbortSignal.abort("why")`, `(() => { const c = new AbortController(); c.abort({ reason: 1 }); return c.signal; })()`);
log("platform", `new TextEncoder()`, `new TextDecoder()`, `new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })`, `new TextEncoder().encode("hé")`, `new TextDecoder().decode(new Uint8Array([104, 105]))`);
log("platform", `new EventTarget()`, `new DOMException("x", "DataCloneError").code`, `crypto.subtle`, `crypto`, `typeof crypto.randomUUID()`, `structuredClone({ a: [1, { b: 2 }], d: new Date(0) })`);
log("platform", `fetch`, `setTimeout`, `atob`, `btoa("hi")`, `structuredClone`, `queueMicrotask`, `Headers`, `AbortController`, `TextEncoder`);
add("platform", `const k = await crypto.subtle.importKey("raw", new Uint8Array(16), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]); console.log(k.type, k.extractable, k.usages, k.algorithm.name);`);

// ---- ethers v5 BigNumber (Deno side: ethers 5.7's own enumerable shape, see generate.mjs)
log("ethers", `ethers.BigNumber.from(1)`, `[ethers.BigNumber.from("1000000000000000000")]`, `{ v: ethers.BigNumber.from(-5), w: ethers.BigNumber.from(0) }`);

// ---- console methods
add("console", `console.info("info"); console.debug("debug"); console.warn("warn"); console.error("error", { e: 1 });`);
add("console", `console.group("g1"); console.log("in g1\\nline2"); console.group(); console.info({ a: 1, b: [1, 2] }); console.groupEnd(); console.warn("back"); console.groupEnd(); console.groupEnd(); console.log("out");`);
add("console", `console.groupCollapsed("gc", 1); console.error("x"); console.dir({ a: { b: { c: { d: { e: { f: 1 } } } } } }); console.dir("str"); console.groupEnd();`);
add("console", `console.group("g"); console.log({ long: "x".repeat(90), arr: Array.from({ length: 10 }, (_, i) => i) }); console.table([{ a: 1 }]); console.groupEnd();`);
add("console", `console.dir({ a: { b: { c: { d: { e: { f: 1 } } } } } }, { depth: 0 }); console.dir({ a: { b: { c: { d: { e: { f: 1 } } } } } }, { depth: null }); console.dir({ a: { b: { c: { d: { e: { f: 1 } } } } } }, { depth: 6 });`);
add("console", `console.dir(); console.dir(undefined); console.dir(null); console.dir(1, { depth: 0 }); console.dirxml({ x: [1] }, [2]);`);
add("console", `console.dir({ b: 2, a: 1, c: [3, 1] }, { sorted: true }); console.dir({ list: Array.from({ length: 10 }, (_, i) => i) }, { breakLength: 20 }); console.dir({ a: [1, 2, 3] }, { compact: false });`);
add("console", `console.dir(Array.from({ length: 10 }, (_, i) => i), { iterableLimit: 3 }); console.dir({ s: "abcdefgh" }, { strAbbreviateSize: 3 }); console.dir({ a: { b: 1 } }, { trailingComma: true, compact: false });`);
add("console", `console.dir({ get g() { return { v: 1 }; }, set s(x) {}, get gs() { return "str"; }, set gs(x) {} }, { getters: true }); console.dir({ get t() { throw new Error("inner"); } }, { getters: true });`);
add("console", `console.assert(true, "no"); console.assert(false); console.assert(false, "msg %s", "sub", 2); console.assert(false, { a: 1 }, "x"); console.assert(); console.assert(0, "");`);
add("console", `console.count(); console.count(); console.count("x"); console.countReset(); console.count(); console.countReset("nope"); console.count(1); console.count({});`);
add("console", `console.time(); console.time(); console.timeLog("zz"); console.timeEnd("zz"); console.timeEnd(); console.timeEnd();`);
add("console", `console.time("t"); console.timeLog("t", "extra", { a: 1 }); console.timeEnd("t");`, { time: true });
add("console", `function inner() { console.trace(); } inner(); console.trace("hello %d", 5, { a: 1 });`);
add("console", `console.group("in group"); console.trace("traced"); console.groupEnd();`);
add("console", `console.table([1, 2]); console.table([{ a: 1, b: "x" }, { a: 2, c: true }]); console.table({ r1: { c: 1 }, r2: { c: 2 } }); console.table([[1, 2], [3, 4]], ["0"]);`);
add("console", `console.table("str"); console.table(new Map([["k", { v: 1 }]])); console.table(new Set(["a"])); console.table([{ a: { deep: { x: 1 } }, b: [1, 2, 3] }]);`);
add("console", `console.table([{ name: "日本", n: 1 }, { name: "x", n: 22 }]); console.table([{ a: 1 }, "prim", 3]); console.table([]); console.table({}); console.table(null); console.table(5);`);
add("console", `console.table([{ a: 1, b: 2 }], ["b", "missing"]); console.table([{ toString: 1, valueOf: 2, x: 3 }]); console.table([{ 2: "two", b: "b", 1: "one" }]);`);
add("console", `try { console.table([], "bad"); } catch (e) { console.log(e.message); } console.table(new Map([[{ k: 1 }, "v"]])); console.table([{ s: "q".repeat(20) }]);`);
add("console", `console.log(console.log, console.dirxml === console.dir, typeof console.table, console.groupCollapsed.name);`);
add("console", `console.profile(); console.profileEnd(); console.timeStamp(); console.log("after no-ops");`);
add("console", `console.group(); console.group(); console.log("a\\nb"); console.groupEnd(); console.groupEnd(); console.groupEnd(); console.log("c");`);

// ---- known differences (the test expects `vesta`; `differs` is the README's reason)
const PROMISE = "QuickJS gives JavaScript no way to read a promise's state or value without waiting for it: <unknown>";
add("differs", `console.log(Promise.resolve(42), new Promise(() => {}));`, { differs: PROMISE, vesta: "Promise { <unknown> } Promise { <unknown> }\n" });
add("differs", `console.log({ p: Promise.resolve({ a: 1 }) }, Object.assign(Promise.resolve(), { x: 1 }));`, { differs: PROMISE, vesta: "{ p: Promise { <unknown> } } Promise { <unknown>, x: 1 }\n" });
add("differs", `const p = Promise.reject(new Error("no")); p.catch(() => {}); console.log(p);`, { differs: PROMISE, vesta: "Promise { <unknown> }\n" });
add("differs", `console.log(new Map([[1, 2]]).entries(), new Set([1]).values());`, { differs: "QuickJS cannot preview an iterator's entries without consuming them", vesta: "[Map Iterator] { <items unknown> } [Set Iterator] { <items unknown> }\n" });
add("differs", `console.log(new Proxy(new Map([[1, 2]]), {}), new Proxy(new Date(0), {}));`, { differs: "QuickJS cannot see through a Proxy: a Proxy of a Map or a Date prints as a plain object of its constructor", vesta: "Map {} Date {}\n" });
const RESPONSE = "Vesta's Response has no body stream: no body property";
add("differs", `console.log(new Response(null, { status: 204 }), Response.error());`, { differs: RESPONSE, vesta: 'Response {\n  bodyUsed: false,\n  headers: Headers {},\n  ok: true,\n  redirected: false,\n  status: 204,\n  statusText: "",\n  url: ""\n} Response {\n  bodyUsed: false,\n  headers: Headers {},\n  ok: false,\n  redirected: false,\n  status: 0,\n  statusText: "",\n  url: ""\n}\n' });
add("differs", `console.log(Response.json({ a: 1 }));`, { differs: RESPONSE, vesta: 'Response {\n  bodyUsed: false,\n  headers: Headers { "content-type": "application/json" },\n  ok: true,\n  redirected: false,\n  status: 200,\n  statusText: "",\n  url: ""\n}\n' });
add("differs", `console.log(new Response("body"));`, { differs: RESPONSE, vesta: 'Response {\n  bodyUsed: false,\n  headers: Headers { "content-type": "text/plain;charset=UTF-8" },\n  ok: true,\n  redirected: false,\n  status: 200,\n  statusText: "",\n  url: ""\n}\n' });
add("differs", `console.log(new URL("http://a.b/?x=1").searchParams);`, { differs: "Vesta's URLSearchParams does not expose its URL: the url object reads null", vesta: 'URLSearchParams {\n  [Symbol(list)]: [ [ "x", "1" ] ],\n  [Symbol("url object")]: null,\n  [Symbol("[[webidl.brand]]")]: Symbol("[[webidl.brand]]")\n}\n' });
add("differs", `console.log((() => { class P { constructor() { this.x = 1; } } const o = new P(); Object.setPrototypeOf(o, null); return o; })());`, { differs: "V8 remembers the class that made an object whose prototype is now null ([P: null prototype]); JavaScript cannot", vesta: "[Object: null prototype] { x: 1 }\n" });
add("differs", `console.log(["\\ud800 lone"], "\\udc00");`, { differs: "Deno writes its output as UTF-8, a lone surrogate as U+FFFD; Vesta's logs keep it (JSON carries it as \\ud800)", vesta: '[ "\ud800 lone" ] \udc00\n' });
add("differs", `console.clear(); console.log("after clear");`, { differs: "the logs are not a terminal: console.clear() writes no escape sequence (it ends the groups)", vesta: "after clear\n" });

export const CASES = cases;
