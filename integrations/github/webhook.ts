/**
 * The webhook: the framework checked X-Hub-Signature-256 against GITHUB_WEBHOOK_SECRET (HMAC-SHA256
 * of the raw body) before this runs. Each delivery is an item of the inbound ledger under its
 * delivery id (`cairn.inbound`), recorded before anything else and before GitHub is answered, and
 * decided once: `ignored` with its reason, or one task queued on the repository's channel with the
 * move to `queued` (one transaction); the task's answer is posted as a comment by the `github`
 * dispatcher. A redelivery (GitHub's "Redeliver" sends the same X-GitHub-Delivery) finds its
 * decision and acts on nothing again; an event ignored stays ignored, whatever was bound since. A
 * delivery whose handling failed is `failed`, tried again by the resume worker and by a
 * redelivery, and a dead letter after INBOUND_MAX_ATTEMPTS; a person's retry hands it back here.
 */
import { type InboundEntry, type IntegrationContext, respond, type RouteRequest } from "../../src/sdk/index.ts"
import { readConfig } from "./config.ts"
import { type EventPlan, planEvent, preambleOf } from "./events.ts"
import { CLIENT_ID_PREFIX } from "./hooks.ts"

/**
 * The delivery ids an older release remembered (before the ledger): read only, so a delivery it
 * handled is still a duplicate when GitHub redelivers it.
 */
export const legacyDeliveries = (cairn: IntegrationContext) => cairn.store.lru("deliveries", 10_000)

/** The channel bound to `owner/repo` (GitHub keeps the case of a name but ignores it), the oldest binding. */
export const channelOf = async (cairn: IntegrationContext, repository: string) => {
  const clientId = `${CLIENT_ID_PREFIX}${repository}`.toLowerCase()
  return (await cairn.channels.bound()).find((bound) => bound.binding.client_id.toLowerCase() === clientId)
}

const header = (request: RouteRequest, ...names: Array<string>) =>
  names.map((name) => request.headers[name]).find((value) => value !== undefined && value !== "")

const runOf = (channelId: string, plan: EventPlan, delivery: string) => ({
  channelId,
  content: plan.content,
  executionConfig: {
    system_preamble: preambleOf(plan),
    skills: [`integrations/github/${plan.skill}`],
    tools: plan.pullRequest ? ["get_pull_request"] : []
  },
  dispatchType: "github",
  dispatchConfig: { repository: plan.repository, number: plan.number, delivery_id: delivery, event: plan.event },
  metadata: { github_event: plan.event, github_action: plan.action, delivery_id: delivery, author: plan.author, url: plan.url }
})

export type DeliveryResult =
  | { readonly status: "ignored"; readonly reason: string; readonly delivery: string }
  | { readonly status: "duplicate"; readonly delivery: string; readonly state: string; readonly reason: string | null }
  | { readonly status: "queued"; readonly delivery: string; readonly task_id: string; readonly channel_id: string }
  | { readonly status: "failed"; readonly delivery: string; readonly error: string; readonly state: string | null }

const summaryOf = (event: string, body: unknown) => {
  const payload = (typeof body === "object" && body !== null ? body : {}) as Record<string, any>
  const item = payload.pull_request ?? payload.issue
  const where = typeof payload.repository?.full_name === "string" ? ` ${payload.repository.full_name}` : ""
  const number = typeof item?.number === "number" ? `#${item.number}` : ""
  const title = typeof item?.title === "string" ? ` "${item.title}"` : ""
  return `${event} ${typeof payload.action === "string" ? payload.action : ""}${where}${number}${title}`.slice(0, 120)
}

/**
 * Decides one delivery the ledger holds undecided (received, or failed before): from the webhook,
 * the resume worker, or a person's retry of its dead letter. Never throws for a failed routing: the
 * item is `failed` (or dead), and the answer says so.
 */
export const decideDelivery = async (cairn: IntegrationContext, entry: InboundEntry): Promise<DeliveryResult> => {
  const delivery = entry.external_id
  const event = String(entry.payload.event ?? "")
  const ignore = async (reason: string): Promise<DeliveryResult> => {
    await cairn.inbound.settle(entry.id, "ignored", { reason })
    return { status: "ignored", reason, delivery }
  }
  // Handled before the ledger existed: an older release's seen id still stands.
  if (await legacyDeliveries(cairn).has(delivery)) {
    await cairn.inbound.settle(entry.id, "ignored", { reason: "duplicate" })
    return { status: "duplicate", delivery, state: "ignored", reason: "duplicate" }
  }
  const decision = planEvent(event, entry.payload.body, readConfig(await cairn.settings.all()))
  if ("ignored" in decision) return ignore(decision.ignored)
  const plan = decision.plan
  const bound = await channelOf(cairn, plan.repository)
  if (!bound) return ignore("unbound")
  try {
    const done = await cairn.inbound.route(entry.id, { runs: [runOf(bound.channel.id, plan, delivery)] })
    if (!done.routed) {
      const now = await cairn.inbound.get(delivery)
      return { status: "duplicate", delivery, state: now?.state ?? "queued", reason: now?.reason ?? null }
    }
    const task_id = done.runs[0]!.task_id
    await cairn.store.set("last-delivery", {
      delivery,
      event,
      action: plan.action,
      repository: plan.repository,
      task_id,
      at: new Date().toISOString()
    })
    return { status: "queued", delivery, task_id, channel_id: bound.channel.id }
  } catch (error) {
    // Nothing was queued (one transaction): a failed attempt, tried again until it is a dead letter.
    const why = error instanceof Error ? error.message : String(error)
    const state = await cairn.inbound.fail(entry.id, why)
    cairn.logger.error(`GitHub: delivery ${delivery} could not be queued (${state ?? "?"}): ${why}`)
    return { status: "failed", delivery, error: why, state }
  }
}

export const webhook = async (request: RouteRequest, cairn: IntegrationContext) => {
  const event = header(request, "x-github-event", "x-gitea-event", "x-forgejo-event")
  const delivery = header(request, "x-github-delivery", "x-gitea-delivery", "x-forgejo-delivery")
  if (!event) return respond(400, { detail: "X-GitHub-Event is missing" })
  if (event === "ping") return { status: "ok", event: "ping" }
  if (!delivery) return respond(400, { detail: "X-GitHub-Delivery is missing" })
  let receipt
  try {
    receipt = await cairn.inbound.receive({
      externalId: delivery,
      summary: summaryOf(event, request.body),
      payload: { event, body: request.body }
    })
  } catch (error) {
    // Not recorded (the server is stopping, the database is away): GitHub is told to send it again.
    return respond(503, {
      detail: `The delivery was not taken now (${error instanceof Error ? error.message : String(error)}); redeliver it`
    })
  }
  if (receipt.decided) return { status: "duplicate", delivery, state: receipt.state, reason: receipt.reason }
  const result = await decideDelivery(cairn, receipt)
  if (result.status !== "failed") return { ...result, event }
  return respond(503, {
    detail: `The event could not be queued now (${result.error}); it is tried again${
      result.state === "dead" ? " when a person retries its dead letter" : ""
    }`,
    state: result.state
  })
}
