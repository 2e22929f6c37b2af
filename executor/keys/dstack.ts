import { DstackClient } from "@phala/dstack-sdk";
import type { KeyProvider } from "./provider";

/** Production key provider: the TEE's dstack guest agent derives keys from the app's identity. */
export class DstackKeyProvider implements KeyProvider {
  readonly kind = "dstack" as const;
  private readonly client: DstackClient;

  constructor(endpoint?: string) {
    this.client = new DstackClient(endpoint);
  }

  async deriveSecret(p: string): Promise<Uint8Array> {
    const { key } = await this.client.getKey(`vesta/${p}`, "vesta-key-v1");
    if (!(key instanceof Uint8Array) || key.length < 32) throw new Error("dstack returned no key material");
    return key.slice(0, 32);
  }
}
