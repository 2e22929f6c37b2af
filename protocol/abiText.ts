/**
 * Strings read from the chain are decoded tolerantly. The contract stores names and descriptions as
 * the bytes it was sent: a wallet that calls it directly (a ChainSecured account) can store bytes
 * that are not UTF-8, which ethers' ABI coder turns into an error thrown when the field is read,
 * and a list holding one such name would fail as a whole. Here every `string` of an answer, an
 * event or an error is decoded with invalid sequences shown as U+FFFD, and everything else as usual.
 *
 * Pure (ethers only): the relayer, the triggers service and the dashboard's wallet mode share it.
 */
import { AbiCoder, Interface, ParamType, Result, toUtf8String, Utf8ErrorFuncs, type BytesLike, type InterfaceAbi } from "ethers";

/** `type` with every `string` (alone, in arrays, in tuples) read as `bytes`, which encode the same. */
function asBytes(p: ParamType): ParamType {
  const json = JSON.parse(p.format("json")) as ParamJson;
  return ParamType.from(swap(json), true);
}
type ParamJson = { type: string; name?: string; components?: ParamJson[]; indexed?: boolean };
const swap = (j: ParamJson): ParamJson => ({ ...j, type: j.type.replace(/^string(?=\[|$)/, "bytes"), ...(j.components ? { components: j.components.map(swap) } : {}) });
const hasString = (p: ParamType): boolean =>
  p.baseType === "string" || (p.isArray() && hasString(p.arrayChildren)) || (p.isTuple() && p.components.some(hasString));

/** The value of `p` decoded as `asBytes(p)` with its strings turned back into text, U+FFFD for bad bytes. */
function toText(p: ParamType, value: unknown): unknown {
  if (!hasString(p)) return value;
  if (p.baseType === "string") return toUtf8String(value as BytesLike, Utf8ErrorFuncs.replace);
  const items = value as Result;
  if (p.isArray()) return Result.fromItems(items.map((v: unknown) => toText(p.arrayChildren, v)));
  const components = (p as ParamType & { components: readonly ParamType[] }).components;
  return Result.fromItems(components.map((c, i) => toText(c, items[i])), components.map((c) => c.name || null));
}

/** An ABI coder whose decoded strings never throw: bytes that are not UTF-8 read as U+FFFD. */
export class TolerantAbiCoder extends AbiCoder {
  override decode(types: ReadonlyArray<string | ParamType>, data: BytesLike, loose?: boolean): Result {
    const params = types.map((t) => ParamType.from(t));
    if (!params.some(hasString)) return super.decode(params, data, loose);
    const raw = super.decode(params.map(asBytes), data, loose);
    return Result.fromItems(params.map((p, i) => toText(p, raw[i])), params.map((p) => p.name || null));
  }
}

const tolerant = new TolerantAbiCoder();

/** An ethers Interface that decodes with TolerantAbiCoder (results, events, errors). */
export class TolerantInterface extends Interface {
  override getAbiCoder(): AbiCoder {
    return tolerant;
  }
}

/** `abi` as a TolerantInterface. */
export const tolerantInterface = (abi: InterfaceAbi | Interface): TolerantInterface => new TolerantInterface(abi instanceof Interface ? abi.fragments : abi);
