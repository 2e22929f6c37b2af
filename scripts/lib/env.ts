import { parseAllowedOrigins } from "../start/portPolicy";

export type StartEnv = { chainHost: string; chainPort: number; chainAllowedOrigins: Set<string>; payerCount: number; dataDir: string };

/** Reads and checks the environment of `npm start`; throws one error listing every bad variable. */
export function readStartEnv(env: NodeJS.ProcessEnv): StartEnv {
  const problems: string[] = [];
  const int = (name: string, def: number, min: number, max: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)} must be an integer from ${min} to ${max}`);
      return def;
    }
    return n;
  };
  const origins = () => {
    try {
      return parseAllowedOrigins(env.VESTA_CHAIN_ALLOWED_ORIGINS);
    } catch (err) {
      problems.push((err as Error).message);
      return new Set<string>();
    }
  };
  const result: StartEnv = {
    chainHost: env.VESTA_CHAIN_HOST || "127.0.0.1",
    chainPort: int("VESTA_CHAIN_PORT", 8545, 1, 65535),
    chainAllowedOrigins: origins(),
    payerCount: int("VESTA_PAYER_COUNT", 4, 1, 19),
    dataDir: env.VESTA_DATA_DIR || ".vesta",
  };
  if (problems.length) throw new Error(`bad environment:\n  - ${problems.join("\n  - ")}`);
  return result;
}
