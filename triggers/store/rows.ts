import type { Selectable } from "kysely";
import { fromJson } from "../../storage";
import type { TriggersDb } from "./schema";
import type { RunRow, RunStatus, TokenRow, TriggerKind, TriggerRow } from "./types";

/** Rows as read back from either database (JSON columns are text, flags 0/1 or false/true). */
export const toTrigger = (r: Selectable<TriggersDb["triggers"]>): TriggerRow => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  kind: r.kind as TriggerKind,
  enabled: Boolean(r.enabled),
  actionCode: r.action_code,
  defaultParams: fromJson(r.default_params),
  usageKeySealed: r.usage_key,
  config: fromJson(r.config),
  state: fromJson(r.state),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const toRun = (r: Selectable<TriggersDb["runs"]>): RunRow => ({
  id: r.id,
  triggerId: r.trigger_id,
  status: r.status as RunStatus,
  params: fromJson(r.params),
  attempts: r.attempts,
  response: fromJson(r.response),
  error: r.error,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
});

export const toToken = (r: Selectable<TriggersDb["tokens"]>): TokenRow => ({
  id: r.id,
  userId: r.user_id,
  challenge: r.challenge,
  name: r.name,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});
