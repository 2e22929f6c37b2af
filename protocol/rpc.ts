import { FetchRequest, JsonRpcProvider, type JsonRpcApiProviderOptions } from "ethers";

/**
 * A JSON-RPC provider whose every request gives up after `timeoutMs` (ethers' own default is five
 * minutes) and retries a rate-limited (429) request once, so a node that hangs or throttles answers
 * as one that is down: 503 chain_unavailable with Retry-After (chainErrors.ts).
 */
export function rpcProvider(url: string, timeoutMs: number, options: JsonRpcApiProviderOptions = {}): JsonRpcProvider {
  const request = new FetchRequest(url);
  request.timeout = timeoutMs;
  request.setThrottleParams({ maxAttempts: 2 }); // a rate-limited node answers 503 with Retry-After at once, not after ethers' 12 tries
  return new JsonRpcProvider(request, undefined, { staticNetwork: true, cacheTimeout: -1, ...options });
}
