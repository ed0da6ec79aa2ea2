/**
 * Which webhook events call the bot, and what the task is told: each event that qualifies becomes
 * one plan (the message, the preamble, the tool and the skill of its execution config); any other
 * becomes a reason to ignore it.
 */
import type { GithubConfig } from "./config.ts"

export interface EventPlan {
  readonly event: string
  readonly action: string
  /** owner/repo */
  readonly repository: string
  /** The pull request's or issue's number (comments are posted on it). */
  readonly number: number
  readonly author: string
  readonly url: string
  readonly pullRequest: boolean
  readonly skill: "review" | "triage"
  /** The user message of the run. */
  readonly content: string
}

export type Decision = { readonly plan: EventPlan } | { readonly ignored: string }

interface Item {
  readonly number?: unknown
  readonly title?: unknown
  readonly body?: unknown
  readonly html_url?: unknown
  readonly user?: { readonly login?: unknown }
  readonly pull_request?: unknown
}

interface Payload {
  readonly action?: unknown
  readonly repository?: { readonly full_name?: unknown }
  readonly sender?: { readonly login?: unknown }
  readonly pull_request?: Item
  readonly issue?: Item
  readonly comment?: Item & { readonly path?: unknown; readonly line?: unknown; readonly diff_hunk?: unknown }
  readonly review?: Item & { readonly state?: unknown }
}

const str = (value: unknown) => (typeof value === "string" ? value : "")
const loginOf = (item: Item | undefined) => str(item?.user?.login)

/** `@login` as a whole word, any case. */
export const mentions = (text: string, login: string) =>
  new RegExp(`(^|[^A-Za-z0-9_-])@${login.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![A-Za-z0-9_-])`, "i").test(text)

const everyComment = (config: GithubConfig, repository: string) =>
  config.everyCommentRepos.some((entry) => entry === "*" || entry.toLowerCase() === repository.toLowerCase())

const subject = (item: Item, pullRequest: boolean) =>
  `${pullRequest ? "pull request" : "issue"} #${String(item.number)} "${str(item.title)}"`

const describe = (event: string, action: string, payload: Payload, item: Item): Omit<EventPlan, "repository" | "number"> => {
  const pr = payload.pull_request !== undefined || item.pull_request !== undefined
  const body = (text: unknown) => (str(text).trim() ? `\n\n${str(text).trim()}` : "\n\n(no description)")
  const base = { event, action, pullRequest: pr }
  switch (event) {
    case "pull_request":
      return {
        ...base,
        author: loginOf(item),
        url: str(item.html_url),
        skill: "review",
        content: `@${loginOf(item)} ${action === "opened" ? "opened" : "pushed new commits to"} ${subject(item, true)}.${body(item.body)}`
      }
    case "issues":
      return {
        ...base,
        author: loginOf(item),
        url: str(item.html_url),
        skill: "triage",
        content: `@${loginOf(item)} opened ${subject(item, false)}.${body(item.body)}`
      }
    case "issue_comment":
      return {
        ...base,
        author: loginOf(payload.comment),
        url: str(payload.comment?.html_url),
        skill: "triage",
        content: `@${loginOf(payload.comment)} commented on ${subject(item, pr)}:${body(payload.comment?.body)}`
      }
    case "pull_request_review":
      return {
        ...base,
        author: loginOf(payload.review),
        url: str(payload.review?.html_url),
        skill: "review",
        content: `@${loginOf(payload.review)} requested changes on ${subject(item, true)}:${body(payload.review?.body)}`
      }
    default: {
      const c = payload.comment
      const at = `${str(c?.path)}${typeof c?.line === "number" ? `:${c.line}` : ""}`
      return {
        ...base,
        author: loginOf(c),
        url: str(c?.html_url),
        skill: "review",
        content: `@${loginOf(c)} commented on ${subject(item, true)} at ${at}:\n\n\`\`\`diff\n${str(c?.diff_hunk)}\n\`\`\`${body(c?.body)}`
      }
    }
  }
}

/** Whether the event and action call the bot at all (before looking at who or where). */
const wanted = (event: string, action: string, payload: Payload, config: GithubConfig): string | undefined => {
  switch (event) {
    case "pull_request":
      return action === "opened" || (action === "synchronize" && config.reviewOnSynchronize)
        ? undefined
        : `action ${action} of pull_request`
    case "issues":
    case "issue_comment":
    case "pull_request_review_comment":
      return action === (event === "issues" ? "opened" : "created") ? undefined : `action ${action} of ${event}`
    case "pull_request_review":
      if (action !== "submitted") return `action ${action} of pull_request_review`
      return str(payload.review?.state).toLowerCase() === "changes_requested" ? undefined : `review state ${str(payload.review?.state)}`
    default:
      return `event ${event}`
  }
}

export const planEvent = (event: string, body: unknown, config: GithubConfig): Decision => {
  const payload = (typeof body === "object" && body !== null ? body : {}) as Payload
  const action = str(payload.action)
  const unwanted = wanted(event, action, payload, config)
  if (unwanted !== undefined) return { ignored: unwanted }
  const repository = str(payload.repository?.full_name)
  const item = event === "issues" || event === "issue_comment" ? payload.issue : payload.pull_request
  if (!/^[^/\s]+\/[^/\s]+$/.test(repository) || !item || typeof item.number !== "number") return { ignored: "malformed payload" }
  const described = describe(event, action, payload, item)
  const bot = config.botLogin?.toLowerCase()
  if (bot && (described.author.toLowerCase() === bot || str(payload.sender?.login).toLowerCase() === bot)) return { ignored: "own account" }
  if (event === "issue_comment" && !everyComment(config, repository) && !(bot && mentions(str(payload.comment?.body), bot))) {
    return { ignored: "not mentioned" }
  }
  return { plan: { ...described, repository, number: item.number } }
}

/** The execution config's preamble: what happened, where, by whom. */
export const preambleOf = (plan: EventPlan) =>
  [
    `You are answering a GitHub webhook event: ${plan.event} (${plan.action}).`,
    `Repository: ${plan.repository}`,
    `${plan.pullRequest ? "Pull request" : "Issue"}: #${plan.number}`,
    `Author: @${plan.author}`,
    `URL: ${plan.url}`,
    plan.pullRequest
      ? `Read the pull request with get_pull_request (repository "${plan.repository}", number ${plan.number}) before you answer.`
      : "",
    "Your final answer is posted as a comment on it, as it is: write it for the people there, in Markdown."
  ].filter(Boolean).join("\n")
