export type TriggerKind = "webhook" | "schedule" | "chain_event";
export type RunStatus = "queued" | "running" | "success" | "failed";

export type TriggerRow = {
  id: string;
  userId: string;
  name: string;
  kind: TriggerKind;
  enabled: boolean;
  actionCode: string;
  defaultParams: Record<string, unknown>;
  usageKeySealed: string;
  config: Record<string, unknown>;
  /** Kind-specific progress: the schedule's last considered time, the chain cursor (next block to scan). */
  state: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
};

export type RunRow = {
  id: string;
  triggerId: string;
  status: RunStatus;
  params: Record<string, unknown>;
  attempts: number;
  response: unknown;
  error: string | null;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
};

export type TokenRow = { id: string; userId: string; challenge: string; name: string; createdAt: number; revokedAt: number | null };
export type User = { id: string; email: string };

/** A run to enqueue; `dedupeKey` makes the insert idempotent per trigger (a chain log, a schedule slot). */
export type NewRun = { id: string; params: Record<string, unknown>; dedupeKey?: string };

/** Storage of the triggers service. Each method is atomic on its own. */
export interface Store {
  /** Several processes may work this store's queue (PostgreSQL): each looks for runs of stopped ones while serving. */
  readonly shared?: boolean;
  // users, sessions, magic links, bearer tokens
  userByEmail(email: string, create: boolean): Promise<User | undefined>;
  userById(id: string): Promise<User | undefined>;
  putMagicLink(hash: string, email: string, expiresAt: number): Promise<void>;
  /**
   * Counts one sign-in mail to `mailbox` against `limit` per `windowMs`: undefined when it fits (and
   * it is counted), or the seconds until one fits. Replicas take turns per mailbox; mails older than
   * the window are dropped on the way.
   */
  spendLoginMail(mailbox: string, limit: number, windowMs: number, now: number): Promise<number | undefined>;
  /** Consumes a magic link once; answers its e-mail if it was valid and unexpired. */
  useMagicLink(hash: string, now: number): Promise<string | undefined>;
  putSession(hash: string, userId: string, expiresAt: number): Promise<void>;
  sessionUser(hash: string, now: number): Promise<User | undefined>;
  addToken(t: TokenRow): Promise<boolean>;
  tokenByChallenge(challenge: string): Promise<TokenRow | undefined>;
  listTokens(userId: string): Promise<TokenRow[]>;
  revokeToken(userId: string, id: string, now: number): Promise<boolean>;
  // triggers
  /**
   * Inserts `t` unless its user already has `limits.perUser` triggers ("user" then), or
   * `limits.ofKind` triggers of its kind when given ("kind"); the counts and the insert are one step
   * per user (replicas too), so racing inserts cannot pass either limit.
   */
  insertTrigger(t: TriggerRow, limits: { perUser: number; ofKind?: number }): Promise<"ok" | "user" | "kind">;
  getTrigger(id: string): Promise<TriggerRow | undefined>;
  listTriggers(userId: string): Promise<TriggerRow[]>;
  listEnabled(kind: TriggerKind): Promise<TriggerRow[]>;
  updateTrigger(t: TriggerRow): Promise<void>;
  deleteTrigger(id: string): Promise<void>;
  // runs
  /** Inserts runs (skipping dedupe keys already seen) and, in the same transaction, replaces the trigger's state. */
  enqueue(triggerId: string, runs: NewRun[], now: number, state?: Record<string, unknown>): Promise<string[]>;
  /** Inserts one run unless the trigger already has `maxQueued` runs waiting (false then), atomically. */
  enqueueBounded(triggerId: string, run: NewRun, now: number, maxQueued: number): Promise<boolean>;
  /** Deletes the trigger's finished runs but the newest `keep`. */
  pruneRuns(triggerId: string, keep: number): Promise<void>;
  /** Moves the oldest queued run to running and answers it; no two callers get the same run. */
  claim(now: number): Promise<RunRow | undefined>;
  noteAttempt(id: string, attempts: number): Promise<void>;
  finish(id: string, status: "success" | "failed", response: unknown, error: string | null, now: number): Promise<void>;
  /** At start: runs left `running` by a killed process are failed, never re-run (no run executes twice). */
  failInterrupted(now: number): Promise<number>;
  getRun(id: string): Promise<RunRow | undefined>;
  listRuns(triggerId: string, limit: number, offset: number): Promise<{ runs: RunRow[]; total: number }>;
  /** Resolves when the database answers a trivial query (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
