/**
 * The configured repository (REPO_DIR): a git working copy of bots (`bots/`), skills (`skills/`)
 * and workflows (`workflows/`) that an operator keeps under version control. Its files are read at
 * start after the project's own (bots and workflows by their loaders, skills here); a pull
 * (`POST /admin/operations/repository/pull`) fast-forwards it to its upstream and syncs what it
 * brought, and every pull, done or refused, is recorded with who asked (the audit).
 *
 * A pulled file's bot or workflow replaces the stored one unless the API has taken it over, as at
 * start; a file the pull removed leaves its bot or workflow in place (delete it through the API).
 * Bots and workflows are stored, so every process sees them; skills live in each process's memory,
 * so other processes read pulled skills at their next start.
 */
import { CommandExecutor } from "@effect/platform"
import { NodeCommandExecutor, NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as path from "node:path"
import { Bots } from "../bots/Bots.ts"
import { AppConfig, repositoryFolder } from "../config/AppConfig.ts"
import { layer as SkillLibraryLive, readSkillDir, SkillLibrary } from "../skills/Skills.ts"
import { traced } from "../telemetry/Spans.ts"
import { syncWorkflowFiles } from "../workflows/Engine.ts"
import { WorkflowsRepo } from "../workflows/Repo.ts"
import { Workflows } from "../workflows/Workflows.ts"
import { RepositoryNotConfigured, RepositoryNotFastForward, RepositoryPullRunning, RepositoryUnreachable } from "./Errors.ts"
import { git as gitIn, maskUrlCredentials } from "./Git.ts"
import { RepositoryStatus, type RepositorySynced } from "./Model.ts"
import { RepositoryPullsRepo } from "./Repo.ts"

const nothingSynced: RepositorySynced = { bots: [], skills: [], workflows: [] }

/** Why git refused a pull, as the error the caller gets (git's own words, credentials masked). */
const refusal = (stderr: string) => {
  const detail = `The pull changed nothing: ${maskUrlCredentials(stderr).split("\n").slice(-6).join(" ").trim()}`
  if (/index\.lock|another git process/i.test(stderr)) return new RepositoryPullRunning({ detail })
  if (/fast-forward|diverg|would be overwritten|uncommitted|unmerged|local changes|no tracking information/i.test(stderr)) {
    return new RepositoryNotFastForward({ detail })
  }
  return new RepositoryUnreachable({ detail })
}

export class GitRepository extends Effect.Service<GitRepository>()("cairn/GitRepository", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const pulls = yield* RepositoryPullsRepo
    const bots = yield* Bots
    const workflows = yield* Workflows
    const workflowsRepo = yield* WorkflowsRepo
    const skills = yield* SkillLibrary
    const executor = yield* CommandExecutor.CommandExecutor
    const git = (dir: string, ...args: ReadonlyArray<string>) =>
      gitIn(dir, ...args).pipe(Effect.provideService(CommandExecutor.CommandExecutor, executor))
    // One pull at a time in this process; git's own lock refuses one running in another.
    const pulling = yield* Effect.makeSemaphore(1)

    // The folder is read again at each pull.
    const syncSkills = Effect.suspend(() =>
      Effect.forEach(
        repositoryFolder(config, "skills").flatMap((dir) => readSkillDir(dir, "", "repository")),
        (skill) => Effect.as(skills.register(skill), skill.id)
      )
    )
    // At start: the repository's skills join the project's (bots and workflows come with their loaders).
    yield* syncSkills

    /** The working copy, or why there is none to pull. */
    const workingCopy = Effect.gen(function*() {
      if (Option.isNone(config.repoDir)) {
        return yield* new RepositoryNotConfigured({ detail: "No repository is configured: set REPO_DIR to a git working copy" })
      }
      const dir = path.resolve(config.repoDir.value)
      const inside = yield* git(dir, "rev-parse", "--is-inside-work-tree")
      if (inside.code !== 0 || inside.stdout !== "true") {
        return yield* new RepositoryNotConfigured({ detail: `REPO_DIR (${dir}) is not a git working copy` })
      }
      return dir
    })

    const headOf = (dir: string) => Effect.map(git(dir, "rev-parse", "HEAD"), (head) => (head.code === 0 ? head.stdout : null))

    const status = (limit: number) =>
      Effect.gen(function*() {
        const dir = yield* workingCopy
        const branch = yield* git(dir, "symbolic-ref", "--short", "-q", "HEAD")
        const upstream = yield* git(dir, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
        const remoteUrl = upstream.code === 0
          ? yield* git(dir, "remote", "get-url", upstream.stdout.split("/")[0]!)
          : undefined
        return new RepositoryStatus({
          dir,
          branch: branch.code === 0 ? branch.stdout : null,
          head: yield* headOf(dir),
          upstream: upstream.code === 0
            ? `${upstream.stdout}${remoteUrl?.code === 0 ? ` (${maskUrlCredentials(remoteUrl.stdout)})` : ""}`
            : null,
          pulls: yield* pulls.latest(limit)
        })
      })

    /** Fast-forwards the working copy to its upstream and syncs what changed; recorded either way. */
    const pull = (requestedBy: string) =>
      Effect.gen(function*() {
        const dir = yield* workingCopy
        const before = yield* headOf(dir)
        const record = (fields: {
          status: "updated" | "current" | "failed"
          after: string | null
          changed?: ReadonlyArray<string>
          synced?: RepositorySynced
          error?: string
        }) =>
          pulls.record({
            id: randomUUID(),
            status: fields.status,
            requested_by: requestedBy,
            before_commit: before,
            after_commit: fields.after,
            changed_files: fields.changed ?? [],
            synced: fields.synced ?? nothingSynced,
            error: fields.error ?? null
          })
        const pulled = yield* git(dir, "pull", "--ff-only", "--no-rebase", "--quiet")
        if (pulled.code !== 0) {
          const error = refusal(pulled.stderr || pulled.stdout)
          yield* record({ status: "failed", after: before, error: error.detail })
          yield* Effect.logWarning(`Repository pull by ${requestedBy} refused: ${error.detail}`)
          return yield* error
        }
        const after = yield* headOf(dir)
        if (after === before) return yield* record({ status: "current", after })
        const diff = before === null
          ? yield* git(dir, "ls-files")
          : yield* git(dir, "diff", "--name-only", `${before}..${after}`)
        const changed = diff.stdout.split("\n").filter((line) => line.length > 0)
        const synced: RepositorySynced = {
          bots: yield* bots.syncFiles(repositoryFolder(config, "bots")),
          skills: yield* syncSkills,
          workflows: yield* syncWorkflowFiles(repositoryFolder(config, "workflows")).pipe(
            Effect.provideService(WorkflowsRepo, workflowsRepo),
            Effect.tap(() => workflows.registerTools)
          )
        }
        yield* Effect.logInfo(`Repository pulled by ${requestedBy}: ${before ?? "(empty)"} → ${after}, ${changed.length} files`)
        return yield* record({ status: "updated", after, changed, synced })
      }).pipe(pulling.withPermits(1))

    return traced("GitRepository", { status, pull } as const)
  }),
  dependencies: [
    RepositoryPullsRepo.Default,
    Bots.Default,
    Workflows.Default,
    WorkflowsRepo.Default,
    SkillLibraryLive,
    NodeCommandExecutor.layer.pipe(Layer.provide(NodeFileSystem.layer))
  ]
}) {}
