/**
 * Comments on a pull request or issue, posted at most once per delivery: the body carries the
 * delivery id in a hidden marker, and before posting the comments (every page) are read;
 * a comment holding the marker means an earlier attempt got through (an answer lost to a 502 or a
 * timeout), so nothing is posted again.
 */
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { githubApi } from "./api.ts"

export const marker = (deliveryId: string) => `<!-- cairn-delivery: ${deliveryId} -->`

export interface Target {
  readonly repository: string
  readonly number: number
}

export const targetOf = (config: Record<string, unknown>): Target => {
  const repository = config.repository
  const number = config.number
  if (typeof repository !== "string" || !/^[^/\s]+\/[^/\s]+$/.test(repository)) {
    throw new Error("dispatch_config.repository (owner/repo) is required for the github dispatcher")
  }
  if (typeof number !== "number" || !Number.isInteger(number) || number < 1) {
    throw new Error("dispatch_config.number (the pull request's or issue's number) is required for the github dispatcher")
  }
  return { repository, number }
}

const commentsPath = (target: Target) => {
  const [owner, repo] = target.repository.split("/")
  return `/repos/${encodeURIComponent(owner!)}/${encodeURIComponent(repo!)}/issues/${target.number}/comments`
}

/** Posts `text` on the target; with a delivery id, only when no comment carries its marker yet. */
export const postComment = async (
  cairn: IntegrationContext,
  target: Target,
  text: string,
  deliveryId?: string
): Promise<{ readonly posted: boolean; readonly id?: number }> => {
  const api = await githubApi(cairn)
  const path = commentsPath(target)
  if (deliveryId !== undefined) {
    const { items } = await api.list<{ body?: string }>(path, 100_000)
    if (items.some((comment) => comment.body?.includes(marker(deliveryId)))) return { posted: false }
  }
  const body = deliveryId === undefined ? text : `${text}\n\n${marker(deliveryId)}`
  const created = await api.post<{ id?: number }>(path, { body })
  return { posted: true, ...(typeof created.id === "number" ? { id: created.id } : {}) }
}
