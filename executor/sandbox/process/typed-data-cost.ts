/**
 * What hashing EIP-712 typed data costs ethers v6's TypedDataEncoder (hash/typed-data.ts), counted on
 * the types and the value before it runs (ethers-bounds.ts weighs the counts against the call's
 * budget). Its costs are not those of its arguments' size:
 *   - it checks the types for cycles by walking every path from the primary type: types that each
 *     name two of the next layer's make 2^layers paths (2 KB of types, 20 layers: seconds);
 *   - each type's full encoding holds the definitions of all the types under it, and each struct
 *     reads the whole types again (a getter that parses their JSON): a chain of 4,000 types (160
 *     KB) makes ~400 MB of strings;
 *   - a struct field of type bool needs no value (a missing one is false), so `{}` as a struct of
 *     10,000 bool fields is 10,000 words, and an array of such `{}` as many times that.
 * So: at most MAX_TYPED_TYPES struct types and MAX_TYPED_FIELDS fields in all (a RangeError past them;
 * a real message has a handful), and the counts: the paths of the cycle check, the characters of
 * the full encodings and of the types parsed again, and each word the value encodes (each field and
 * array item visited as ethers visits them), with the bytes it hashes.
 */

/** Most struct types one call may name (a real message has a handful; Seaport's orders have 4). */
export const MAX_TYPED_TYPES = 256;
/** Most fields of all struct types of one call. */
export const MAX_TYPED_FIELDS = 4096;

/** What the encoder makes: `steps` (paths of the cycle check, each as long as the types are deep), `chars` of type text, `words` encoded and `bytes` hashed. */
export type TypedDataCounts = { steps: number; chars: number; words: number; bytes: number };
export type TypedDataWeights = (counts: TypedDataCounts) => number;

type Field = { name: string; type: string };

/** What ethers' splitArray takes as the base of a type: the text before its first "[" when it ends in "[n]". */
function splitArray(type: string): { base: string; prefix?: string; count?: number } {
  const match = /^([^\x5b]*)((\x5b\d*\x5d)*)(\x5b(\d*)\x5d)$/.exec(type);
  return match ? { base: match[1], prefix: match[1] + match[2], count: match[5] ? parseInt(match[5]) : -1 } : { base: type };
}

const BASE = /^(u?int\d+|bytes\d+|address|bool|bytes|string)$/;

class OverBudget extends Error {}

/**
 * The counts of hashing `value` (when given) as `primary` (when given; else ethers' primary type)
 * with `types`, or null past `budget` (as weighed by `weigh`). Types that are not an object of
 * arrays of {name, type} strings count nothing: ethers refuses them before it does any work.
 */
export function typedDataCounts(types: unknown, value: unknown, primary: string | null, weigh: TypedDataWeights, budget: number): TypedDataCounts | null {
  if (types === null || typeof types !== "object" || Array.isArray(types)) return { steps: 0, chars: 0, words: 0, bytes: 0 };
  const names = Object.keys(types).filter((n) => n !== "EIP712Domain"); // the shim drops it (ethers-calls.ts)
  if (names.length > MAX_TYPED_TYPES) throw new RangeError(`typed data may define at most ${MAX_TYPED_TYPES} struct types, got ${names.length}`);
  const fieldsOf = new Map<string, Field[]>();
  let fieldCount = 0;
  let chars = 0; // of all the type definitions
  let messages = 0; // of the messages ethers writes for its checks
  let longestName = 0;
  for (const name of names) {
    const fields = (types as Record<string, unknown>)[name];
    if (!Array.isArray(fields)) return { steps: 0, chars: 0, words: 0, bytes: 0 };
    fieldCount += fields.length;
    if (fieldCount > MAX_TYPED_FIELDS) throw new RangeError(`typed data may define at most ${MAX_TYPED_FIELDS} fields in all its struct types`);
    const list: Field[] = [];
    for (const f of fields) {
      if (f === null || typeof f !== "object" || typeof f.name !== "string" || typeof f.type !== "string") return { steps: 0, chars: 0, words: 0, bytes: 0 };
      list.push({ name: f.name, type: f.type });
      chars += f.name.length + f.type.length + 2;
      // ethers writes the messages of its checks of each field before checking: the field's names and its type's
      messages += f.name.length + 2 * f.type.length + name.length;
    }
    fieldsOf.set(name, list);
    chars += name.length + 2;
    longestName = Math.max(longestName, name.length);
  }
  const counts: TypedDataCounts = { steps: 0, chars: 0, words: 0, bytes: 0 };
  const count = (key: keyof TypedDataCounts, n: number) => {
    counts[key] += n;
    if (weigh(counts) > budget) throw new OverBudget();
  };
  try {
    // Each type's full encoding (its definition and those under it) and each struct's parse of all
    // the types: at most every type's worth of all the text, twice (UTF-16).
    count("chars", 2 * names.length * chars + messages);
    // The cycle check visits each path; each visit writes a message naming the type and marks the types above it.
    const paths = cyclePaths(names, fieldsOf);
    count("chars", paths * longestName);
    count("steps", paths * names.length);
    if (value !== undefined) {
      const root = primary ?? names.find((n) => !names.some((m) => fieldsOf.get(m)!.some((f) => splitArray(f.type).base === n)));
      if (root !== undefined) encodeCounts(root, value, fieldsOf, count);
    }
  } catch (err) {
    if (err instanceof OverBudget) return null;
    throw err;
  }
  return counts;
}

/** How many times ethers' checkCircular runs: once for each path from a type down its struct fields (counted per type, a path through a cycle ends there). */
function cyclePaths(names: string[], fieldsOf: Map<string, Field[]>): number {
  const children = new Map(names.map((n) => [n, [...new Set(fieldsOf.get(n)!.map((f) => splitArray(f.type).base).filter((b) => fieldsOf.has(b) && !BASE.test(b)))]]));
  const paths = new Map<string, number>();
  const onPath = new Set<string>();
  // Iterative depth-first walk (a chain of MAX_TYPED_TYPES types is as deep), memoised per type.
  const pathsFrom = (start: string): number => {
    const stack: { name: string; next: number; sum: number }[] = [{ name: start, next: 0, sum: 1 }];
    onPath.add(start);
    let result = 0;
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      const kids = children.get(top.name)!;
      if (top.next < kids.length) {
        const child = kids[top.next++];
        const known = paths.get(child);
        if (known !== undefined) top.sum = Math.min(Number.MAX_SAFE_INTEGER, top.sum + known);
        else if (onPath.has(child)) top.sum += 1; // ethers stops at a cycle
        else {
          onPath.add(child);
          stack.push({ name: child, next: 0, sum: 1 });
        }
        continue;
      }
      stack.pop();
      onPath.delete(top.name);
      paths.set(top.name, top.sum);
      if (stack.length > 0) stack[stack.length - 1].sum = Math.min(Number.MAX_SAFE_INTEGER, stack[stack.length - 1].sum + top.sum);
      else result = top.sum;
    }
    return result;
  };
  let most = 0;
  for (const name of names) most = Math.max(most, paths.get(name) ?? pathsFrom(name));
  return most;
}

/** The words ethers' encodeData makes of `value` as `type`, as it visits them (it stops where it would throw). */
function encodeCounts(type: string, value: unknown, fieldsOf: Map<string, Field[]>, count: (key: keyof TypedDataCounts, n: number) => void): void {
  const stack: [string, unknown][] = [[type, value]];
  while (stack.length > 0) {
    const [t, v] = stack.pop()!;
    count("words", 1);
    if (BASE.test(t)) {
      if (typeof v === "string") count("bytes", 3 * v.length);
      else if (v instanceof Uint8Array) count("bytes", v.length);
      continue;
    }
    const { prefix } = splitArray(t);
    if (prefix !== undefined) {
      if (!Array.isArray(v)) continue;
      for (const item of v) stack.push([prefix, item]);
      continue;
    }
    const fields = fieldsOf.get(t);
    if (!fields || v === null || typeof v !== "object") continue;
    for (const f of fields) stack.push([f.type, (v as Record<string, unknown>)[f.name]]);
  }
}
