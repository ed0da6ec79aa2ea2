import { defineTool, type ToolCallContext } from "../../../src/sdk/index.ts"
import { githubApi } from "../api.ts"
import { CLIENT_ID_PREFIX } from "../hooks.ts"
import { cairnContext } from "../state.ts"

interface PullRequest {
  readonly number: number
  readonly title?: string
  readonly body?: string | null
  readonly state?: string
  readonly draft?: boolean
  readonly html_url?: string
  readonly user?: { readonly login?: string }
  readonly base?: { readonly ref?: string }
  readonly head?: { readonly ref?: string; readonly sha?: string }
}

interface PullFile {
  readonly filename: string
  readonly status?: string
  readonly additions?: number
  readonly deletions?: number
  readonly patch?: string
}

/** At most this many files are listed (GitHub itself stops at 3000). */
const MAX_FILES = 300

/** Patches in order until `budget` characters are used; the rest cut, and each cut one says so. */
export const fitPatches = (files: ReadonlyArray<PullFile>, budget: number) => {
  let left = budget
  let truncated = false
  const fitted = files.map((file) => {
    const patch = file.patch ?? ""
    const kept = patch.slice(0, Math.max(0, left))
    left -= kept.length
    const cut = kept.length < patch.length
    truncated ||= cut
    return {
      filename: file.filename,
      status: file.status,
      additions: file.additions,
      deletions: file.deletions,
      patch: kept,
      ...(cut ? { patch_truncated: true, patch_chars: patch.length } : {})
    }
  })
  return { files: fitted, truncated }
}

/** `owner/repo` from the arguments, else from the client id of the channel's binding (`github:owner/repo`). */
const repositoryOf = async (given: unknown, context: ToolCallContext) => {
  let repository = typeof given === "string" ? given.trim() : ""
  if (!repository && context.channelId) {
    const bound = (await cairnContext().channels.bound()).find((b) => b.channel.id === context.channelId)
    repository = bound?.binding.client_id.slice(CLIENT_ID_PREFIX.length) ?? ""
  }
  if (!/^[^/\s]+\/[^/\s]+$/.test(repository)) throw new Error("repository must be owner/repo")
  return repository
}

export default defineTool({
  schema: {
    type: "function",
    function: {
      name: "get_pull_request",
      description:
        "Reads a GitHub pull request: title, description, author, branches and the changed files with their patches (long patches are truncated, and the answer says so). repository is owner/repo (default: the channel's repository).",
      parameters: {
        type: "object",
        properties: {
          repository: { type: "string", description: "owner/repo" },
          number: { type: "integer", description: "The pull request's number" }
        },
        required: ["number"]
      }
    }
  },
  effect: "read",
  timeoutMs: 60_000,
  execute: async (args, context) => {
    const number = Number(args.number)
    if (!Number.isInteger(number) || number < 1) throw new Error("number must be a pull request's number")
    const repository = await repositoryOf(args.repository, context)
    const api = await githubApi(cairnContext())
    const [owner, repo] = repository.split("/").map(encodeURIComponent)
    const pr = await api.get<PullRequest>(`/repos/${owner}/${repo}/pulls/${number}`)
    const listed = await api.list<PullFile>(`/repos/${owner}/${repo}/pulls/${number}/files`, MAX_FILES)
    const { files, truncated } = fitPatches(listed.items, api.config.maxPatchChars)
    return JSON.stringify({
      repository,
      number: pr.number,
      title: pr.title,
      body: pr.body ?? "",
      state: pr.state,
      draft: pr.draft,
      author: pr.user?.login,
      url: pr.html_url,
      base: pr.base?.ref,
      head: pr.head?.ref,
      head_sha: pr.head?.sha,
      files,
      truncated: truncated || listed.more,
      ...(truncated
        ? { note: `Patches were cut at ${api.config.maxPatchChars} characters in all; files with patch_truncated are incomplete.` }
        : {}),
      ...(listed.more ? { files_note: `Only the first ${MAX_FILES} changed files are listed.` } : {})
    })
  }
})
