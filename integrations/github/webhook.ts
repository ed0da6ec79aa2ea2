/**
 * The webhook: the framework checked X-Hub-Signature-256 against GITHUB_WEBHOOK_SECRET (HMAC-SHA256
 * of the raw body) before this runs. A delivery already seen (GitHub redelivers) does nothing; an
 * event that calls the bot queues one task on the repository's channel and answers at once (GitHub
 * gives up after 10 s); the task's answer is posted as a comment by the `github` dispatcher.
 */
import { type IntegrationContext, respond, type RouteRequest } from "../../src/sdk/index.ts"
import { readConfig } from "./config.ts"
import { type EventPlan, planEvent, preambleOf } from "./events.ts"
import { CLIENT_ID_PREFIX } from "./hooks.ts"

/** How many delivery ids are remembered (durably, in the integration's store). */
export const SEEN_DELIVERIES = 10_000

export const deliveries = (cairn: IntegrationContext) => cairn.store.lru("deliveries", SEEN_DELIVERIES)

/** The channel bound to `owner/repo` (GitHub keeps the case of a name but ignores it), the oldest binding. */
export const channelOf = async (cairn: IntegrationContext, repository: string) => {
  const clientId = `${CLIENT_ID_PREFIX}${repository}`.toLowerCase()
  return (await cairn.channels.bound()).find((bound) => bound.binding.client_id.toLowerCase() === clientId)
}

const header = (request: RouteRequest, ...names: Array<string>) =>
  names.map((name) => request.headers[name]).find((value) => value !== undefined && value !== "")

const start = (cairn: IntegrationContext, channelId: string, plan: EventPlan, delivery: string) =>
  cairn.runs.start({
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

export const webhook = async (request: RouteRequest, cairn: IntegrationContext) => {
  const event = header(request, "x-github-event", "x-gitea-event", "x-forgejo-event")
  const delivery = header(request, "x-github-delivery", "x-gitea-delivery", "x-forgejo-delivery")
  if (!event) return respond(400, { detail: "X-GitHub-Event is missing" })
  if (event === "ping") return { status: "ok", event: "ping" }
  if (!delivery) return respond(400, { detail: "X-GitHub-Delivery is missing" })
  const decision = planEvent(event, request.body, readConfig(await cairn.settings.all()))
  if ("ignored" in decision) return { status: "ignored", reason: decision.ignored, event, delivery }
  const plan = decision.plan
  const bound = await channelOf(cairn, plan.repository)
  if (!bound) return { status: "ignored", reason: "unbound", repository: plan.repository, delivery }
  const seen = deliveries(cairn)
  if (!(await seen.add(delivery))) return { status: "duplicate", delivery }
  try {
    const { task_id } = await start(cairn, bound.channel.id, plan, delivery)
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
    // Nothing was queued: the delivery is forgotten, so GitHub's redelivery is handled.
    await seen.remove(delivery)
    const why = error instanceof Error ? error.message : String(error)
    cairn.logger.error(`GitHub: delivery ${delivery} could not be queued: ${why}`)
    return respond(503, { detail: `The event could not be queued now (${why}); redeliver it` })
  }
}
