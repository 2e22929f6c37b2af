import { parseOrThrow } from "../../protocol/validate";
import { z } from "zod";
import type { TriggersCtx } from "../context";
import type { TriggerKind } from "../store/types";
import { ChainEventConfig, prepareChainEvent } from "./chainEvent";
import { initialScheduleState, ScheduleConfig, validateSchedule } from "./schedule";

/** Validates a trigger's `config` for its kind; answers the stored config and the initial state. */
export async function prepareKind(ctx: TriggersCtx, kind: TriggerKind, raw: unknown): Promise<{ config: Record<string, unknown>; state: Record<string, unknown> }> {
  const inConfig = <T extends z.ZodType>(s: T) => (parseOrThrow(z.object({ config: s }), { config: raw }, "body") as { config: z.output<T> }).config;
  if (kind === "webhook") return { config: inConfig(z.strictObject({})), state: {} };
  if (kind === "schedule") {
    const c = inConfig(ScheduleConfig);
    validateSchedule(c);
    return { config: c, state: initialScheduleState(ctx.now()) };
  }
  return prepareChainEvent(ctx, inConfig(ChainEventConfig));
}
