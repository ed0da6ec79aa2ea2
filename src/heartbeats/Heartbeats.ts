/**
 * Channel heartbeats: a prompt the channel's bot answers on a schedule, as a task in the channel's
 * session, its answer posted through a dispatcher's `post_message` (not when it has nothing to say
 * and the heartbeat posts only when there is). Firing and posting run in one scheduler across every
 * server process (Scheduler.ts); a slot fires once whoever tries it (a unique key on the slot).
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { Channels } from "../channels/Channels.ts"
import { ValidationError } from "../contract/Errors.ts"
import { Bus } from "../db/Bus.ts"
import { Intake } from "../intake/Intake.ts"
import { makeDispatchSecrets, maskDispatchConfig, unmaskDispatchConfig } from "../secrets/DispatchConfig.ts"
import { Dispatchers } from "../tasks/delivery/Dispatchers.ts"
import { Injector } from "../tasks/Injection.ts"
import { traced } from "../telemetry/Spans.ts"
import { HeartbeatNotFound } from "./Errors.ts"
import { Heartbeat, type HeartbeatBody, HeartbeatRun } from "./Model.ts"
import { type HeartbeatRow, HeartbeatsRepo, type RunRow } from "./Repo.ts"
import { cronProblem, hasSomethingToSay, inQuietHours, nextSlot, nothingToReport } from "./Slots.ts"

const cadenceOf = (row: Pick<HeartbeatRow, "interval_seconds" | "cron" | "timezone">) => ({
  intervalSeconds: row.interval_seconds,
  cron: row.cron,
  timezone: row.timezone
})

/** The slot after `after`, or null when the heartbeat is off or has ended. */
export const slotAfter = (
  row: Pick<HeartbeatRow, "enabled" | "interval_seconds" | "cron" | "timezone" | "ends_at" | "anchor">,
  after: Date
) => {
  if (!row.enabled) return null
  const next = nextSlot(cadenceOf(row), row.anchor, after)
  return row.ends_at !== null && next > row.ends_at ? null : next
}

/** A heartbeat as responses show it: secrets in its dispatch_config masked. */
const toHeartbeat = (row: HeartbeatRow) => new Heartbeat({ ...row, dispatch_config: maskDispatchConfig(row.dispatch_config) })

export const toRun = (row: RunRow) => new HeartbeatRun(row)

export class Heartbeats extends Effect.Service<Heartbeats>()("cairn/Heartbeats", {
  effect: Effect.gen(function*() {
    const repo = yield* HeartbeatsRepo
    const channels = yield* Channels
    const chat = yield* Intake
    const injector = yield* Injector
    const dispatchers = yield* Dispatchers
    const bus = yield* Bus
    const secrets = yield* makeDispatchSecrets
    // Rows an older release stored with a URL credential in the clear are sealed once, here.
    yield* repo.resealDispatchConfigs(secrets.seal)

    const notFound = (channelId: string) => new HeartbeatNotFound({ detail: `The channel ${channelId} has no heartbeat` })

    const get = (channelId: string) =>
      Effect.gen(function*() {
        yield* channels.get(channelId)
        const row = yield* repo.find(channelId)
        if (!row) return yield* notFound(channelId)
        return toHeartbeat(row)
      })

    /** Sets a channel's heartbeat; its schedule starts from now. */
    const put = (channelId: string, body: HeartbeatBody) =>
      Effect.gen(function*() {
        yield* channels.get(channelId)
        const problem = body.cron === null ? null : cronProblem(body.cron, body.timezone)
        if (problem !== null) return yield* ValidationError.single(["body", "cron"], `Invalid cron expression: ${problem}`, "invalid_cron")
        yield* dispatchers.requireKnown(body.dispatch_type === "none" ? undefined : body.dispatch_type)
        const now = new Date()
        // A secret sent back as the mask a GET showed keeps its stored value.
        const stored = (yield* repo.find(channelId))?.dispatch_config ?? {}
        const sent = unmaskDispatchConfig(body.dispatch_config, secrets.open(stored))
        const settings = {
          ...body,
          channel_id: channelId,
          ends_at: body.ends_at === null ? null : new Date(body.ends_at),
          dispatch_config: secrets.seal(sent)
        }
        const nextAt = slotAfter({ ...settings, anchor: now }, now)
        const saved = toHeartbeat(yield* repo.upsert({ ...settings, nextAt }, now))
        // The scheduler sleeps until the next slot it knew of: this one may come sooner.
        yield* bus.publish("heartbeats", channelId)
        return saved
      })

    const runs = (channelId: string, limit: number) =>
      Effect.gen(function*() {
        yield* channels.get(channelId)
        return (yield* repo.runs(channelId, limit)).map(toRun)
      })

    /** Fires a slot: quiet hours record it as quiet; otherwise the prompt goes to the bot as a task. */
    const fire = (row: HeartbeatRow, slot: Date, trigger: "schedule" | "catch_up" | "manual") =>
      Effect.gen(function*() {
        // A slot that comes while the last answer is still being written is let go: runs never pile up.
        if (trigger !== "manual" && (yield* repo.hasRunning(row.channel_id))) return undefined
        const quiet = trigger !== "manual" && inQuietHours(slot, row.timezone, row.quiet_start, row.quiet_end)
        const run = yield* repo.beginRun({
          id: randomUUID(),
          channelId: row.channel_id,
          slot,
          trigger,
          status: quiet ? "quiet" : "running"
        })
        if (!run || quiet) return run
        const { session } = yield* chat.channelSession(row.channel_id)
        const prompt = row.only_when_something
          ? `${row.prompt}\n\n(Heartbeat: if there is nothing worth reporting, answer exactly ${nothingToReport}.)`
          : row.prompt
        const injected = yield* injector.inject(session.id, {
          content: prompt,
          source: "heartbeat",
          runAgent: true,
          notify: false,
          extraMetadata: { heartbeat_run_id: run.id, slot: slot.toISOString() }
        })
        if (injected.task_id) yield* repo.attachTask(run.id, injected.task_id)
        return run
      })

    /** "Run now": a run outside the schedule (quiet hours do not hold it back). */
    const runNow = (channelId: string) =>
      Effect.gen(function*() {
        yield* channels.get(channelId)
        const row = yield* repo.find(channelId)
        if (!row) return yield* notFound(channelId)
        const run = yield* fire(row, new Date(), "manual")
        if (!run) return yield* notFound(channelId)
        return toRun(run)
      })

    /** Ends the runs whose task finished: posts an answer with something to say (once), records the rest. */
    const settle = Effect.gen(function*() {
      for (const run of yield* repo.settling) {
        const heartbeat = yield* repo.find(run.channel_id)
        if (run.task_status !== "complete") {
          yield* repo.finish(run.id, "failed", null, run.task_error ?? `The task ended ${run.task_status ?? "missing"}`)
          continue
        }
        const answer = run.task_result ?? ""
        const post = heartbeat !== undefined && heartbeat.dispatch_type !== "none" &&
          (!heartbeat.only_when_something || hasSomethingToSay(answer))
        // Ended before posting: whichever process ends it posts, and only once.
        if (!(yield* repo.finish(run.id, post ? "posted" : "silent", answer, null)) || !post) continue
        const channel = yield* channels.get(run.channel_id).pipe(Effect.option)
        const posted = yield* dispatchers.postMessage(heartbeat!.dispatch_type, heartbeat!.dispatch_config, answer, {
          ...(channel._tag === "Some" ? { botId: channel.value.bot_id } : {}),
          extraMetadata: { heartbeat_run_id: run.id, channel_id: run.channel_id, slot: run.slot.toISOString() }
        })
        if (!posted) yield* repo.postFailed(run.id, `post_message through ${heartbeat!.dispatch_type} did not post`)
      }
    })

    return traced("Heartbeats", { get, put, runs, runNow, fire, settle } as const)
  }),
  dependencies: [HeartbeatsRepo.Default, Channels.Default, Intake.Default, Injector.Default, Dispatchers.Default, Bus.Default]
}) {}
