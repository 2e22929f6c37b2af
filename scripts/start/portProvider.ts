/**
 * The chain as npm start's JSON-RPC port serves it (./rpcServer.ts): the durable provider (every
 * change journaled, ./durableProvider.ts) with only the methods ./portPolicy.ts allows, and
 * eth_estimateGas searched within the gas the request names (./estimateGas.ts). A refused call
 * reaches nothing (not the node, not the journal) and answers JSON-RPC error -32601 saying why.
 */
import type { EIP1193Provider, RequestArguments } from "hardhat/types";
import { ProviderWrapper } from "hardhat/internal/core/providers/wrapper";
import { MethodNotFoundError } from "hardhat/internal/core/providers/errors";
import { portRefusal } from "./portPolicy";
import { estimateWithin, namedGas } from "./estimateGas";

export class PortProvider extends ProviderWrapper {
  constructor(chain: EIP1193Provider) {
    super(chain);
  }

  public async request(args: RequestArguments): Promise<unknown> {
    const refused = portRefusal(args.method);
    if (refused) throw new MethodNotFoundError(`${args.method} is not available on npm start's JSON-RPC port: ${refused}`);
    const params = this._getParams(args);
    const gas = args.method === "eth_estimateGas" ? namedGas(params[0]) : undefined;
    if (gas !== undefined) return estimateWithin((p) => this._wrappedProvider.request({ method: "eth_call", params: p }), params, gas);
    return this._wrappedProvider.request(args);
  }
}
